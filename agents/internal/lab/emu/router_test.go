package emu

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

var routerA = netip.MustParseAddr("198.18.128.1")

// probe is ipv4() with a TTL and a valid header checksum, as a kernel sends it.
func probe(proto byte, ttl byte, sport, dport uint16, size int) []byte {
	pkt := ipv4(proto, hostA, hostB, sport, dport, size)
	pkt[8] = ttl
	binary.BigEndian.PutUint16(pkt[10:12], checksum(pkt[:20]))
	return pkt
}

// icmpMessage is an ICMP packet from hostA to hostB of the given type.
func icmpMessage(icmpType byte, ttl byte) []byte {
	pkt := probe(protoICMP, ttl, 0, 0, 84)
	pkt[20], pkt[21] = icmpType, 0
	return pkt
}

func TestDecrementTTLKeepsTheHeaderChecksumValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100_000; i++ {
		headerLen := 20 + 4*rng.IntN(11) // with and without options
		pkt := make([]byte, headerLen+8)
		for j := range pkt {
			pkt[j] = byte(rng.Uint32())
		}
		pkt[0] = 0x40 | byte(headerLen/4)
		pkt[8] = byte(1 + rng.IntN(255))
		pkt[10], pkt[11] = 0, 0
		binary.BigEndian.PutUint16(pkt[10:12], checksum(pkt[:headerLen]))
		before := append([]byte(nil), pkt...)

		decrementTTL(pkt)
		if pkt[8] != before[8]-1 {
			t.Fatalf("TTL %d became %d", before[8], pkt[8])
		}
		if checksum(pkt[:headerLen]) != 0 {
			t.Fatalf("header checksum invalid after decrementing TTL %d: % x", before[8], pkt[:headerLen])
		}
		if !bytes.Equal(pkt[:8], before[:8]) || !bytes.Equal(pkt[12:], before[12:]) || pkt[9] != before[9] {
			t.Fatal("decrementTTL changed more than the TTL and the checksum")
		}
	}
}

func TestDecrementTTLLowersTheIPv6HopLimitOnly(t *testing.T) {
	pkt := ipv6Packet(protoUDP, "2001:2::1", "2001:2::2", 1, 2, 60)
	before := append([]byte(nil), pkt...)
	decrementTTL(pkt)
	if pkt[7] != 63 || !bytes.Equal(pkt[:7], before[:7]) || !bytes.Equal(pkt[8:], before[8:]) {
		t.Fatalf("hop limit 64 gave % x", pkt)
	}
	pkt[7] = 1
	if !ttlExhausted(pkt) {
		t.Fatal("hop limit 1 must expire at a router")
	}
}

func TestDecrementTTLLeavesOtherPacketsAlone(t *testing.T) {
	for _, pkt := range [][]byte{{0x60, 0, 0}, {0x45, 0, 0}, probe(protoUDP, 0, 1, 2, 40)} {
		before := append([]byte(nil), pkt...)
		decrementTTL(pkt)
		if !bytes.Equal(pkt, before) {
			t.Fatalf("changed % x", before)
		}
	}
}

func TestTimeExceededBytes(t *testing.T) {
	// A traceroute UDP probe, TTL 1, DF, 24 bytes of payload; the expected answer was built
	// independently (Python's struct and its own checksum).
	expired, _ := hex.DecodeString("45000034123440000111db5dc6120001c61200029c40829a0020abcd" +
		"6162636465666768696a6b6c6d6e6f707172737475767778")
	want, _ := hex.DecodeString("450000380000000040016e9ec6128001c6120001" + // IPv4, TTL 64, ICMP, router -> sender
		"0b002a3700000000" + // type 11, code 0, checksum, unused
		"45000034123440000111db5dc6120001c61200029c40829a0020abcd") // header + 8 bytes
	got := timeExceeded(expired, routerA)
	if !bytes.Equal(got, want) {
		t.Fatalf("time exceeded\n got % x\nwant % x", got, want)
	}
	if checksum(got[:20]) != 0 || checksum(got[20:]) != 0 {
		t.Fatal("checksums do not verify")
	}
}

func TestTimeExceededQuotesOptionsAndShortPayloads(t *testing.T) {
	withOptions := probe(protoTCP, 1, 40000, 5201, 60)
	withOptions[0] = 0x46 // 4 bytes of options: the quote is 24 + 8 bytes
	binary.BigEndian.PutUint16(withOptions[10:12], 0)
	binary.BigEndian.PutUint16(withOptions[10:12], checksum(withOptions[:24]))
	shortEcho := icmpMessage(icmpEchoRequest, 1)[:24] // 4 bytes after the header
	for name, tc := range map[string]struct {
		pkt    []byte
		quoted int
	}{"options": {withOptions, 32}, "short payload": {shortEcho, 24}} {
		reply := timeExceeded(tc.pkt, routerA)
		if len(reply) != 28+tc.quoted || !bytes.Equal(reply[28:], tc.pkt[:tc.quoted]) {
			t.Fatalf("%s: quote % x, want the first %d bytes of % x", name, reply[28:], tc.quoted, tc.pkt)
		}
		if binary.BigEndian.Uint16(reply[2:4]) != uint16(len(reply)) || checksum(reply[:20]) != 0 || checksum(reply[20:]) != 0 {
			t.Fatalf("%s: bad length or checksum: % x", name, reply)
		}
	}
}

func TestTimeExceeded6Bytes(t *testing.T) {
	// A traceroute UDP probe over IPv6, hop limit 1; the expected answer was built
	// independently (Python's struct and ipaddress, its own pseudo-header checksum).
	expired, _ := hex.DecodeString("600000000018110120010002000000000000000000000001200100020000000000000000000000029c40829a001812346162636465666768696a6b6c6d6e6f70")
	want, _ := hex.DecodeString("6000000000483a40200100020000000100000000c612800120010002000000000000000000000001" + // IPv6, ICMPv6, hop limit 64, router -> sender
		"030050cc00000000" + // type 3, code 0, checksum, unused
		"600000000018110120010002000000000000000000000001200100020000000000000000000000029c40829a001812346162636465666768696a6b6c6d6e6f70")
	router6 := netip.MustParseAddr("2001:2:0:1::c612:8001")
	if got := timeExceeded(expired, router6); !bytes.Equal(got, want) {
		t.Fatalf("got  % x\nwant % x", got, want)
	}
	if got := timeExceeded(expired, routerA); got != nil {
		t.Fatalf("an IPv4 router answered an IPv6 packet: % x", got)
	}
	big := ipv6Packet(protoTCP, "2001:2::1", "2001:2::2", 1, 2, 9000)
	big[7] = 1
	if reply := timeExceeded(big, router6); len(reply) != minIPv6MTU || !bytes.Equal(reply[48:], big[:minIPv6MTU-48]) {
		t.Fatalf("a jumbo packet's answer is %d bytes, want %d quoting its start", len(reply), minIPv6MTU)
	}
}

func TestNoTimeExceededForICMPv6ErrorsAndOthers(t *testing.T) {
	router6 := netip.MustParseAddr("2001:2:0:1::c612:8001")
	for _, icmpType := range []byte{1, 2, icmp6TimeExceeded, 4, 135} { // errors, neighbour solicitation
		pkt := ipv6Packet(protoICMPv6, "2001:2::1", "2001:2::2", 0, 0, 64)
		pkt[7], pkt[40] = 1, icmpType
		if reply := timeExceeded(pkt, router6); reply != nil {
			t.Errorf("ICMPv6 type %d answered", icmpType)
		}
	}
	for _, icmpType := range []byte{icmp6EchoRequest, icmp6EchoReply} {
		pkt := ipv6Packet(protoICMPv6, "2001:2::1", "2001:2::2", 0, 0, 64)
		pkt[7], pkt[40] = 1, icmpType
		if timeExceeded(pkt, router6) == nil {
			t.Errorf("echo type %d not answered", icmpType)
		}
	}
	fragment := ipv6Packet(44, "2001:2::1", "2001:2::2", 0, 0, 64) // a fragment header
	if timeExceeded(fragment, router6) != nil {
		t.Error("a packet with extension headers answered")
	}
}

func TestNoTimeExceededForICMPErrorsAndOthers(t *testing.T) {
	laterFragment := probe(protoUDP, 1, 1, 2, 100)
	binary.BigEndian.PutUint16(laterFragment[6:8], 185) // offset 1480 bytes
	silent := map[string][]byte{
		"destination unreachable": icmpMessage(3, 1),
		"time exceeded":           icmpMessage(icmpTimeExceeded, 1),
		"parameter problem":       icmpMessage(12, 1),
		"GRE":                     probe(47, 1, 1, 2, 100),
		"later fragment":          laterFragment,
		"IPv6":                    append([]byte{0x60}, make([]byte, 47)...),
	}
	for name, pkt := range silent {
		if reply := timeExceeded(pkt, routerA); reply != nil {
			t.Errorf("%s: answered with % x", name, reply)
		}
	}
	for name, pkt := range map[string][]byte{"echo request": icmpMessage(icmpEchoRequest, 1), "echo reply": icmpMessage(icmpEchoReply, 1)} {
		if timeExceeded(pkt, routerA) == nil {
			t.Errorf("%s: not answered", name)
		}
	}
}

func twoRouters() []Member {
	return []Member{
		{Delay: 4 * time.Millisecond, Weight: 1, Router: routerA},
		{Delay: 8 * time.Millisecond, Weight: 1, Router: netip.MustParseAddr("198.18.128.2")},
	}
}

func TestECMPMembersExpireTTLsAndPlainDirectionsDoNot(t *testing.T) {
	ecmp := NewDirection(Params{Members: twoRouters()}, 1)
	for ttl, want := range map[byte]Verdict{0: Expire, 1: Expire, 2: Forward, 64: Forward} {
		if f := ecmp.Admit(probe(protoUDP, ttl, 40000, 33434, 60), t0); f.Verdict != want || f.Router != ecmp.Params().Members[f.Member].Router {
			t.Fatalf("TTL %d through a member: %+v, want %v", ttl, f, want)
		}
	}
	if c := ecmp.Counters(); c.Expired != 2 || c.Forwarded != 2 {
		t.Fatalf("counters %+v", c)
	}
	plain := NewDirection(Params{Delay: 4 * time.Millisecond}, 1)
	if f := plain.Admit(probe(protoUDP, 1, 40000, 33434, 60), t0); f.Verdict != Forward || f.Router.IsValid() {
		t.Fatalf("a direction without ECMP is no router hop: %+v", f)
	}
}

// socketTUN stands in for a TUN device: one end of a packet socket pair is the device
// the pump uses, the other the kernel's side of it.
func socketTUN(t *testing.T) (device TUN, kernel int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return TUN{Name: "test", FD: fds[0]}, fds[1]
}

// receive reads what the pump wrote into a device, nil when nothing came within 3 s: a
// packet that is due comes, however late a loaded machine runs the delay line.
func receive(t *testing.T, kernel int) []byte {
	t.Helper()
	return receiveWithin(t, kernel, 3*time.Second)
}

// nothingWithin is what a device got within 200 ms, for checks that nothing comes (a
// packet dropped is never late).
func nothingWithin(t *testing.T, kernel int) []byte {
	t.Helper()
	return receiveWithin(t, kernel, 200*time.Millisecond)
}

// receiveWithin reads what the pump wrote into a device, nil when nothing came in time.
// A read with a receive timeout is not restarted after a signal (the Go runtime's preemption
// signal among them): it is read again on EINTR, as tun.go does.
func receiveWithin(t *testing.T, kernel int, wait time.Duration) []byte {
	t.Helper()
	timeout := syscall.NsecToTimeval(int64(wait))
	if err := syscall.SetsockoptTimeval(kernel, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &timeout); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	n, err := syscall.Read(kernel, buf)
	for errors.Is(err, syscall.EINTR) {
		n, err = syscall.Read(kernel, buf)
	}
	if errors.Is(err, syscall.EAGAIN) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

func TestPumpsMakeECMPMembersRouterHops(t *testing.T) {
	a, aKernel := socketTUN(t)
	b, bKernel := socketTUN(t)
	forward, reverse := NewPumps(NewDirection(Params{Members: twoRouters()}, 1), NewDirection(Params{Delay: 3 * time.Millisecond}, 2), a, b)
	defer forward.line.Close()
	defer reverse.line.Close()

	sent := probe(protoUDP, 64, 40000, 33434, 60)
	forward.handle(sent, time.Now())
	got := receive(t, bKernel)
	if got == nil || got[8] != 63 || checksum(got[:20]) != 0 || !bytes.Equal(got[20:], sent[20:]) {
		t.Fatalf("through a member: % x, want TTL 63 and a valid checksum", got)
	}

	start := time.Now()
	expired := probe(protoUDP, 1, 40000, 33434, 60)
	forward.handle(expired, start)
	reply := receive(t, aKernel)
	took := time.Since(start)
	memberDelays := map[netip.Addr]time.Duration{}
	for _, m := range twoRouters() {
		memberDelays[m.Router] = m.Delay
	}
	if len(reply) < 28 || reply[20] != icmpTimeExceeded || !bytes.Equal(reply[28:], expired[:28]) {
		t.Fatalf("expired probe answered with % x, want a Time Exceeded quoting it", reply)
	}
	memberDelay, fromRouter := memberDelays[netip.AddrFrom4([4]byte(reply[12:16]))]
	if !fromRouter {
		t.Fatalf("the Time Exceeded comes from %v, not a member's router", reply[12:16])
	}
	// Not sooner than the delays proves them applied; the upper bound only catches a delay
	// applied many times over: under -race on two busy CI cores a wakeup came 53 ms late,
	// and a timer elsewhere 337 ms.
	if want := memberDelay + 3*time.Millisecond; took < want || took > want+time.Second {
		t.Fatalf("the answer took %v, want the member's delay and the way back: %v", took, want)
	}
	if got := nothingWithin(t, bKernel); got != nil {
		t.Fatalf("an expired probe went on: % x", got)
	}

	forward.handle(icmpMessage(3, 1), time.Now())
	if got := nothingWithin(t, aKernel); got != nil {
		t.Fatalf("an ICMP error was answered: % x", got)
	}

	back := probe(protoUDP, 1, 33434, 40000, 60)
	reverse.handle(back, time.Now())
	if got := receive(t, aKernel); !bytes.Equal(got, back) {
		t.Fatalf("a direction without ECMP changed the packet: % x, want % x", got, back)
	}
}
