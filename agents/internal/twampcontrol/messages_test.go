package twampcontrol

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
)

// seq is n octets counting up from first, to tell fields apart.
func seq(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

func zeros(n int) []byte { return make([]byte, n) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Each layout below is built from the RFC's field list, field by field.

func TestServerGreetingLayout(t *testing.T) {
	challenge, salt := [16]byte(seq(0x10, 16)), [16]byte(seq(0x40, 16))
	want := cat(
		zeros(12),             // Unused
		[]byte{0, 0, 0, 1},    // Modes: unauthenticated
		challenge[:], salt[:], // Challenge, Salt
		[]byte{0, 0, 0x04, 0}, // Count 1024
		zeros(12),             // MBZ
	)
	got := greeting(challenge, salt)
	if len(want) != 64 || !bytes.Equal(got, want) {
		t.Fatalf("greeting\n got %x\nwant %x", got, want)
	}
}

func TestSetUpResponseMode(t *testing.T) {
	msg := cat([]byte{0, 0, 0, 1}, seq(1, 80), seq(2, 64), seq(3, 16)) // Mode, KeyID, Token, Client-IV
	if len(msg) != setUpResponseSize || chosenMode(msg) != 1 {
		t.Fatalf("size %d mode %d", len(msg), chosenMode(msg))
	}
}

func TestServerStartLayout(t *testing.T) {
	iv := [16]byte(seq(0x20, 16))
	started := twamp.Timestamp(0x0102030405060708)
	want := cat(zeros(15), []byte{3}, iv[:], []byte{1, 2, 3, 4, 5, 6, 7, 8}, zeros(8))
	if got := serverStart(3, iv, started); len(want) != 48 || !bytes.Equal(got, want) {
		t.Fatalf("server-start\n got %x\nwant %x", got, want)
	}
}

// requestBytes is a Request-TW-Session (RFC 5357 §3.5) built field by field.
func requestBytes(ipvn byte, sender, receiver []byte, typeP []byte) []byte {
	return cat(
		[]byte{5, ipvn, 0, 0}, // Command, MBZ|IPVN, Conf-Sender, Conf-Receiver
		zeros(4), zeros(4),    // Number of Schedule Slots, Number of Packets
		[]byte{0x4e, 0x20}, // Sender Port 20000
		[]byte{0x4e, 0x21}, // Receiver Port 20001
		sender, receiver,   // 16 octets each
		zeros(16),                      // SID
		[]byte{0, 0, 0, 27},            // Padding Length
		seq(0x80, 8),                   // Start Time
		[]byte{0, 0, 0, 3, 0, 0, 0, 0}, // Timeout: 3 s
		typeP,                          // Type-P Descriptor
		zeros(8), zeros(16),            // MBZ, HMAC
	)
}

func TestRequestTWSessionLayout(t *testing.T) {
	v4 := func(a string) []byte { raw := netip.MustParseAddr(a).As4(); return cat(raw[:], zeros(12)) }
	msg := requestBytes(4, v4("192.0.2.1"), v4("192.0.2.2"), []byte{0, 0, 0, 0})
	if len(msg) != 112 {
		t.Fatalf("%d octets", len(msg))
	}
	r, err := parseRequest(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := request{IPVN: 4, SenderPort: 20000, ReceiverPort: 20001,
		Sender: netip.MustParseAddr("192.0.2.1"), Receiver: netip.MustParseAddr("192.0.2.2"),
		PaddingBytes: 27, Start: 0x8081828384858687, Timeout: 3 << 32}
	if r != want {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}

	v6 := func(a string) []byte { raw := netip.MustParseAddr(a).As16(); return raw[:] }
	r, err = parseRequest(requestBytes(6, v6("2001:db8::1"), zeros(16), []byte{0x04, 0, 0, 0}))
	if err != nil || r.Sender != netip.MustParseAddr("2001:db8::1") || r.Receiver.IsValid() || r.TypeP != 0x04000000 {
		t.Fatalf("IPv6: %+v %v", r, err)
	}
	if _, err := parseRequest(requestBytes(5, zeros(16), zeros(16), zeros(4))); err == nil {
		t.Fatal("IPVN 5 parsed")
	}
	if _, err := parseRequest(msg[:111]); err == nil {
		t.Fatal("111 octets parsed")
	}
}

func TestAcceptSessionLayout(t *testing.T) {
	sid := [16]byte(seq(0x30, 16))
	want := cat([]byte{0, 0}, []byte{0x03, 0x5e}, sid[:], zeros(12), zeros(16)) // Accept, MBZ, Port 862, SID, MBZ, HMAC
	if got := acceptSession(0, 862, sid); len(want) != 48 || !bytes.Equal(got, want) {
		t.Fatalf("accept-session\n got %x\nwant %x", got, want)
	}
}

func TestSessionIDLayout(t *testing.T) {
	want := cat([]byte{192, 0, 2, 7}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 10, 11, 12})
	got := sessionID(netip.MustParseAddr("::ffff:192.0.2.7"), 0x0102030405060708, [4]byte{9, 10, 11, 12})
	if !bytes.Equal(got[:], want) {
		t.Fatalf("SID %x, want %x", got, want)
	}
	got = sessionID(netip.MustParseAddr("2001:db8::a:b"), 0, [4]byte{})
	if !bytes.Equal(got[:4], []byte{0, 0x0a, 0, 0x0b}) {
		t.Fatalf("IPv6 SID %x", got)
	}
}

func TestStartAckAndStopSessionsLayouts(t *testing.T) {
	if got, want := startAck(0), zeros(32); !bytes.Equal(got, want) { // Accept, MBZ 15, HMAC 16
		t.Fatalf("start-ack %x", got)
	}
	stop := cat([]byte{3, 0}, zeros(2), []byte{0, 0, 0, 2}, zeros(8), zeros(16)) // Command, Accept, MBZ, Number of Sessions, MBZ, HMAC
	if accept, n := stopSessions(stop); len(stop) != 32 || accept != 0 || n != 2 {
		t.Fatalf("stop-sessions: accept %d sessions %d", accept, n)
	}
}
