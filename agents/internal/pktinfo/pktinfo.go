// Package pktinfo lets a UDP server listening on all addresses answer from the address
// each request was sent to. Left to routing, the kernel may pick another of the host's
// addresses, and a prober's connected socket drops such a reply, recording loss where there
// was none. The kernel tells the address a datagram arrived on (IP_PKTINFO,
// IPV6_RECVPKTINFO) and takes the address to send from the same way. The echo responder and
// the TWAMP-light reflector both answer this way.
package pktinfo

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
)

// Space is room for both kinds of packet information: a dual-stack socket given
// both options gets both for an IPv4 request.
var Space = syscall.CmsgSpace(syscall.SizeofInet4Pktinfo) + syscall.CmsgSpace(syscall.SizeofInet6Pktinfo)

// Enable asks the kernel for the local address of each datagram arriving on conn,
// when conn listens on all addresses (one bound to an address replies from it anyway). It
// reports whether any datagram will carry it.
func Enable(conn *net.UDPConn) bool {
	local, ok := conn.LocalAddr().(*net.UDPAddr)
	if !ok || !local.IP.IsUnspecified() {
		return false
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return false
	}
	enabled := false
	_ = rc.Control(func(fd uintptr) { enabled = setPktinfo(fd) })
	return enabled
}

// BeforeBind is a net.ListenConfig Control for UDP: it sets the options before the
// socket is bound, so that not even the first requests arrive without the information.
func BeforeBind(_, address string, c syscall.RawConn) error {
	if host, _, err := net.SplitHostPort(address); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			_ = c.Control(func(fd uintptr) { setPktinfo(fd) })
		}
	}
	return nil
}

// setPktinfo sets the options the socket's family takes and reports whether any was set.
func setPktinfo(fd uintptr) bool {
	sa, err := syscall.Getsockname(int(fd))
	if err != nil {
		return false
	}
	enabled := false
	if _, v6 := sa.(*syscall.SockaddrInet6); v6 {
		if syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_RECVPKTINFO, 1) == nil {
			enabled = true
		}
	}
	// On a dual-stack socket this gives IPv4 requests (arriving IPv4-mapped) their IPv4
	// information too.
	if syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_PKTINFO, 1) == nil {
		enabled = true
	}
	return enabled
}

// ArrivedOn returns the local address a datagram from from arrived on, from its control
// messages; false when they do not say.
func ArrivedOn(oob []byte, from netip.AddrPort) (netip.Addr, bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return netip.Addr{}, false
	}
	var v4, v6 netip.Addr
	for _, m := range msgs {
		switch {
		case m.Header.Level == syscall.IPPROTO_IP && m.Header.Type == syscall.IP_PKTINFO &&
			len(m.Data) >= syscall.SizeofInet4Pktinfo:
			// struct in_pktinfo: ifindex, spec_dst, addr. spec_dst is the local address to
			// answer from: the header's destination, or for a broadcast, the interface's.
			v4 = netip.AddrFrom4([4]byte(m.Data[4:8]))
		case m.Header.Level == syscall.IPPROTO_IPV6 && m.Header.Type == syscall.IPV6_PKTINFO &&
			len(m.Data) >= syscall.SizeofInet6Pktinfo:
			// struct in6_pktinfo: addr, ifindex.
			v6 = netip.AddrFrom16([16]byte(m.Data[:16]))
		}
	}
	if from.Addr().Unmap().Is4() {
		if !v4.IsValid() && v6.Is4In6() {
			v4 = v6.Unmap()
		}
		return v4, v4.IsValid() && !v4.IsUnspecified()
	}
	return v6, v6.IsValid() && !v6.IsUnspecified() && !v6.Is4In6()
}

// AppendSendFrom appends to oob a control message that sends a datagram from local: an
// IPv4 address as IP_PKTINFO's spec_dst (also to an IPv4-mapped destination on a
// dual-stack socket), an IPv6 one as IPV6_PKTINFO's address. The interface is left to
// routing (index 0), as for any reply.
func AppendSendFrom(oob []byte, local netip.Addr) []byte {
	if local.Is4() {
		return appendCmsg(oob, syscall.IPPROTO_IP, syscall.IP_PKTINFO,
			&syscall.Inet4Pktinfo{Spec_dst: local.As4()})
	}
	return appendCmsg(oob, syscall.IPPROTO_IPV6, syscall.IPV6_PKTINFO,
		&syscall.Inet6Pktinfo{Addr: local.As16()})
}

// appendCmsg appends one control message: a header in the platform's layout and byte
// order (as syscall.UnixRights builds it), then data, each padded to the platform's
// alignment.
func appendCmsg(oob []byte, level, typ int, data any) []byte {
	n := binary.Size(data)
	h := syscall.Cmsghdr{Level: int32(level), Type: int32(typ)}
	h.SetLen(syscall.CmsgLen(n))
	start := len(oob)
	oob, _ = binary.Append(oob, binary.NativeEndian, &h)
	oob = append(oob, make([]byte, start+syscall.CmsgLen(0)-len(oob))...)
	oob, _ = binary.Append(oob, binary.NativeEndian, data)
	return append(oob, make([]byte, start+syscall.CmsgSpace(n)-len(oob))...)
}
