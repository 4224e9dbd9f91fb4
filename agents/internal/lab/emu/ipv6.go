package emu

import (
	"encoding/binary"
	"net/netip"
)

// IPv6 through a router hop: the hop limit drops by one (there is no header checksum to
// mend), and a packet whose hop limit runs out is answered with an ICMPv6 Time Exceeded
// (RFC 4443, type 3 code 0) from the member's IPv6 router.

const (
	ipv6HeaderLen = 40
	protoICMPv6   = 58

	icmp6TimeExceeded = 3
	icmp6EchoRequest  = 128
	icmp6EchoReply    = 129

	// minIPv6MTU bounds an ICMPv6 error: it quotes as much of the packet as fits in the
	// minimum MTU (RFC 4443 2.4 (c)).
	minIPv6MTU = 1280
)

// isIPv6 says whether pkt is an IPv6 packet with a whole fixed header.
func isIPv6(pkt []byte) bool { return len(pkt) >= ipv6HeaderLen && pkt[0]>>4 == 6 }

// timeExceeded6 is the ICMPv6 Time Exceeded that router sends to pkt's source: a fresh
// IPv6 header, the ICMPv6 header and as much of pkt as keeps the answer within 1280 bytes.
// It is nil when router is not an IPv6 address, and for packets a router answers with
// silence: anything but TCP, UDP and ICMPv6 echo in the fixed header's next header (above
// all ICMPv6 errors, types below 128, which must never cause errors).
func timeExceeded6(pkt []byte, router netip.Addr) []byte {
	if !router.Is6() || router.Is4In6() || !answerable6(pkt) {
		return nil
	}
	quoted := pkt[:min(len(pkt), minIPv6MTU-ipv6HeaderLen-8)]
	reply := make([]byte, ipv6HeaderLen+8+len(quoted))

	ip := reply[:ipv6HeaderLen]
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:6], uint16(8+len(quoted)))
	ip[6] = protoICMPv6
	ip[7] = replyTTL
	from := router.As16()
	copy(ip[8:24], from[:])
	copy(ip[24:40], pkt[8:24]) // back to whoever sent the expired packet

	icmp := reply[ipv6HeaderLen:]
	icmp[0] = icmp6TimeExceeded // code 0: hop limit exceeded in transit; bytes 4-7 unused
	copy(icmp[8:], quoted)
	binary.BigEndian.PutUint16(icmp[2:4], icmp6Checksum(ip[8:24], ip[24:40], icmp))
	return reply
}

// answerable6 says whether an expired IPv6 packet deserves a Time Exceeded.
func answerable6(pkt []byte) bool {
	switch pkt[6] {
	case protoTCP, protoUDP:
		return true
	case protoICMPv6:
		return len(pkt) > ipv6HeaderLen && (pkt[ipv6HeaderLen] == icmp6EchoRequest || pkt[ipv6HeaderLen] == icmp6EchoReply)
	default:
		return false
	}
}

// icmp6Checksum is ICMPv6's checksum of message (its checksum field zero): the Internet
// checksum over the pseudo-header (source, destination, upper-layer length, next header
// 58) and the message (RFC 4443 2.3, RFC 8200 8.1).
func icmp6Checksum(src, dst, message []byte) uint16 {
	pseudo := make([]byte, 0, 40+len(message))
	pseudo = append(pseudo, src...)
	pseudo = append(pseudo, dst...)
	pseudo = binary.BigEndian.AppendUint32(pseudo, uint32(len(message)))
	pseudo = append(pseudo, 0, 0, 0, protoICMPv6)
	pseudo = append(pseudo, message...)
	return checksum(pseudo)
}
