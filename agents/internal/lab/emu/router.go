package emu

import (
	"encoding/binary"
	"net/netip"
)

// An ECMP member is one router hop, so that traceroute can tell members apart as it can
// where each member of a real multipath goes through its own routers. The router
// decrements the TTL of what it forwards and answers a packet whose TTL runs out with an
// ICMP Time Exceeded from its own address.

const (
	protoICMP = 1
	protoTCP  = 6
	protoUDP  = 17

	icmpEchoReply    = 0
	icmpEchoRequest  = 8
	icmpTimeExceeded = 11

	// replyTTL is the TTL the routers' ICMP messages start with, Linux's default.
	replyTTL = 64
	// quotedPayload is how much of the expired packet's payload an ICMP error quotes after
	// its IP header (RFC 792: 64 bits, enough for the ports).
	quotedPayload = 8
)

// ipv4HeaderLen is the header length of a well-formed IPv4 packet; ok is false for
// anything else (IPv6 the kernel may send into a TUN device, truncated headers).
func ipv4HeaderLen(pkt []byte) (headerLen int, ok bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return 0, false
	}
	headerLen = int(pkt[0]&0x0f) * 4
	return headerLen, headerLen >= 20 && len(pkt) >= headerLen
}

// ttlExhausted says whether a router must not forward pkt: an IPv4 packet with TTL 1 or 0,
// an IPv6 packet with hop limit 1 or 0.
func ttlExhausted(pkt []byte) bool {
	if isIPv6(pkt) {
		return pkt[7] <= 1
	}
	_, ok := ipv4HeaderLen(pkt)
	return ok && pkt[8] <= 1
}

// decrementTTL is what a router does to the IPv4 packets it forwards. The header checksum
// is updated incrementally (RFC 1624) as Linux's ip_decrease_ttl does: the TTL is the high
// byte of its 16-bit word, so the word drops by 0x0100 and the checksum rises by as much,
// with the end-around carry. IPv6 has no header checksum: its hop limit just drops.
// Anything else passes untouched.
func decrementTTL(pkt []byte) {
	if isIPv6(pkt) {
		if pkt[7] > 0 {
			pkt[7]--
		}
		return
	}
	if _, ok := ipv4HeaderLen(pkt); !ok || pkt[8] == 0 {
		return
	}
	pkt[8]--
	sum := uint32(binary.BigEndian.Uint16(pkt[10:12])) + 0x0100
	if sum >= 0xffff {
		sum++
	}
	binary.BigEndian.PutUint16(pkt[10:12], uint16(sum))
}

// timeExceeded is the ICMP Time Exceeded (type 11, code 0) that router sends to pkt's
// source when pkt's TTL runs out there: a fresh IPv4 header, then the ICMP header and
// pkt's IP header with the first 8 bytes of its payload (RFC 792). It is nil for packets a
// router answers with silence: anything but TCP, UDP and ICMP echo (above all ICMP errors,
// which must never cause ICMP errors), and fragments other than the first. An IPv6 packet
// gets ICMPv6's answer from an IPv6 router (timeExceeded6); a router of the other family
// cannot answer at all.
func timeExceeded(pkt []byte, router netip.Addr) []byte {
	if isIPv6(pkt) {
		return timeExceeded6(pkt, router)
	}
	headerLen, ok := ipv4HeaderLen(pkt)
	if !ok || !router.Is4() || !answerable(pkt, headerLen) {
		return nil
	}
	quoted := pkt[:min(len(pkt), headerLen+quotedPayload)]
	reply := make([]byte, 20+8+len(quoted))

	ip := reply[:20]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(len(reply)))
	ip[8] = replyTTL
	ip[9] = protoICMP
	from := router.As4()
	copy(ip[12:16], from[:])
	copy(ip[16:20], pkt[12:16]) // back to whoever sent the expired packet
	binary.BigEndian.PutUint16(ip[10:12], checksum(ip))

	icmp := reply[20:]
	icmp[0] = icmpTimeExceeded // code 0: TTL exceeded in transit; bytes 4-7 are unused
	copy(icmp[8:], quoted)
	binary.BigEndian.PutUint16(icmp[2:4], checksum(icmp))
	return reply
}

// answerable says whether an expired packet deserves a Time Exceeded: the first (or only)
// fragment of a TCP or UDP packet, or of an ICMP echo request or reply.
func answerable(pkt []byte, headerLen int) bool {
	if binary.BigEndian.Uint16(pkt[6:8])&0x1fff != 0 {
		return false // a later fragment: only the first one carries the ports to quote
	}
	switch pkt[9] {
	case protoTCP, protoUDP:
		return true
	case protoICMP:
		return len(pkt) > headerLen && (pkt[headerLen] == icmpEchoRequest || pkt[headerLen] == icmpEchoReply)
	default:
		return false
	}
}

// checksum is the Internet checksum (RFC 1071) of b: the one's complement of the one's
// complement sum of its 16-bit words. Over a header that holds its checksum, it is 0.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i : i+2]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
