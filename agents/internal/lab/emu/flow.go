package emu

import "encoding/binary"

// FlowHash hashes an IP packet's 5-tuple (FNV-1a) the way an ECMP router does with an L4
// hash policy: TCP and UDP flows keep one member for their lifetime; ICMP and other
// protocols hash on addresses and protocol only, so a ping keeps one member too. IPv6 is
// hashed on its fixed header's next header (a packet with extension headers hashes as
// its addresses only, as a router that does not walk them would).
// ok is false for anything that is not a well-formed IPv4 or IPv6 packet.
func FlowHash(pkt []byte) (hash uint32, ok bool) {
	var proto byte
	var addresses []byte
	var headerLen int
	fragmentOffset := uint16(0)
	if isIPv6(pkt) {
		proto, addresses, headerLen = pkt[6], pkt[8:40], ipv6HeaderLen
	} else {
		headerLen, ok = ipv4HeaderLen(pkt)
		if !ok {
			return 0, false
		}
		proto, addresses = pkt[9], pkt[12:20]
		fragmentOffset = binary.BigEndian.Uint16(pkt[6:8]) & 0x1fff
	}
	h := uint32(2166136261)
	mix := func(b byte) {
		h ^= uint32(b)
		h *= 16777619
	}
	mix(proto)
	for _, b := range addresses { // source and destination address
		mix(b)
	}
	if (proto == protoTCP || proto == protoUDP) && fragmentOffset == 0 && len(pkt) >= headerLen+4 {
		for _, b := range pkt[headerLen : headerLen+4] { // source and destination port
			mix(b)
		}
	}
	return h, true
}

// PickMember chooses a member for a hash by weight; weights of zero never get traffic
// unless all are zero, when members share equally.
func PickMember(hash uint32, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		return int(hash % uint32(len(weights)))
	}
	slot := int(hash % uint32(total))
	for i, w := range weights {
		if slot < w {
			return i
		}
		slot -= w
	}
	return len(weights) - 1
}
