package twamp

import (
	"context"
	"errors"
	"net"
	"syscall"

	"github.com/fathom-net/fathom/agents/internal/pktinfo"
)

// Listen opens a reflector's socket at address ("host:port", host empty for all addresses)
// with the options Serve needs set before it is bound, so that not even the first packets
// arrive without their TTL or, on all addresses, the address they were sent to.
func Listen(ctx context.Context, address string) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		var setErr error
		if err := c.Control(func(fd uintptr) { setErr = errors.Join(recvTTL(fd), ttl255(fd)) }); err != nil {
			return err
		}
		if setErr != nil {
			return setErr
		}
		return pktinfo.BeforeBind(network, address, c)
	}}
	conn, err := lc.ListenPacket(ctx, "udp", address)
	if err != nil {
		return nil, err
	}
	return conn.(*net.UDPConn), nil
}

// EnableTTL asks the kernel for each datagram's TTL (IPv4) or hop limit (IPv6), which the
// reflector returns as Sender TTL: the sender reads the hops its packet crossed from it.
func EnableTTL(conn *net.UDPConn) error { return control(conn, recvTTL) }

// sendWithTTL255 makes a socket's packets leave with the highest TTL (hop limit), as RFC
// 5357 asks of both ends, so the receiving end reads how many hops they crossed.
func sendWithTTL255(conn *net.UDPConn) error { return control(conn, ttl255) }

func recvTTL(fd uintptr) error {
	return eitherFamily(fd, syscall.IPPROTO_IP, syscall.IP_RECVTTL, syscall.IPPROTO_IPV6, syscall.IPV6_RECVHOPLIMIT, 1)
}

func ttl255(fd uintptr) error {
	return eitherFamily(fd, syscall.IPPROTO_IP, syscall.IP_TTL, syscall.IPPROTO_IPV6, syscall.IPV6_UNICAST_HOPS, 255)
}

// eitherFamily sets an option's IPv4 and IPv6 forms to value: a socket of one family takes
// one of them, a dual-stack socket both. It fails only when neither is taken.
func eitherFamily(fd uintptr, level4, option4, level6, option6, value int) error {
	v4 := syscall.SetsockoptInt(int(fd), level4, option4, value)
	v6 := syscall.SetsockoptInt(int(fd), level6, option6, value)
	if v4 != nil && v6 != nil {
		return errors.Join(v4, v6)
	}
	return nil
}

// control runs set on conn's descriptor.
func control(conn *net.UDPConn, set func(fd uintptr) error) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var setErr error
	err = raw.Control(func(fd uintptr) { setErr = set(fd) })
	return errors.Join(err, setErr)
}
