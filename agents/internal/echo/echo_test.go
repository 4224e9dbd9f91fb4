package echo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

func TestPacketsRoundTripAndForeignBytesAreRefused(t *testing.T) {
	p := Packet{Round: 0xdeadbeef, Flow: 63, Seq: 99, SentNs: 1234567890123}
	for _, size := range []int{0, HeaderLen, 64, MaxLen, 4000} {
		b := p.Marshal(size)
		if len(b) < HeaderLen || len(b) > MaxLen {
			t.Fatalf("size %d gave %d bytes", size, len(b))
		}
		got, err := Decode(b)
		if err != nil || got != p {
			t.Fatalf("size %d: %+v %v", size, got, err)
		}
	}
	reply := p
	reply.Reply = true
	if got, err := Decode(reply.Marshal(32)); err != nil || !got.Reply {
		t.Fatalf("reply: %+v %v", got, err)
	}
	cases := map[string]struct {
		data []byte
		want error
	}{
		"empty":        {nil, ErrShort},
		"short":        {p.Marshal(HeaderLen)[:HeaderLen-1], ErrShort},
		"long":         {append(p.Marshal(MaxLen), 0), ErrLong},
		"foreign":      {bytes.Repeat([]byte{'x'}, 40), ErrNotFathm},
		"magic prefix": {append([]byte("FATHMEQ"), make([]byte, 30)...), ErrNotFathm},
	}
	for name, tc := range cases {
		if _, err := Decode(tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

func TestAnswerKeepsLengthAndNeverAnswersAReply(t *testing.T) {
	req := Packet{Round: 7, Flow: 1, Seq: 2, SentNs: 3}.Marshal(48)
	original := bytes.Clone(req)
	if !Answer(req) {
		t.Fatal("a request was not answered")
	}
	if len(req) != len(original) || !bytes.Equal(req[8:], original[8:]) || string(req[:8]) != ReplyMagic {
		t.Fatalf("reply %x from %x", req, original)
	}
	if Answer(req) {
		t.Fatal("a reply was answered: two responders could bounce it forever")
	}
	foreign := []byte("GET / HTTP/1.0\r\n\r\n and then some more bytes")
	if Answer(foreign) || string(foreign[:3]) != "GET" {
		t.Fatal("a foreign packet was answered or changed")
	}
}

func TestLimiterBoundsEachSource(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(10, 5, func() time.Time { return now })
	a, b := netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")
	allowed := 0
	for range 20 {
		if l.allow(a) {
			allowed++
		}
	}
	if allowed != 5 {
		t.Fatalf("burst of 5 allowed %d", allowed)
	}
	if !l.allow(b) {
		t.Fatal("another source shares the first one's bucket")
	}
	now = now.Add(300 * time.Millisecond) // 3 tokens back
	allowed = 0
	for range 10 {
		if l.allow(a) {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("after 0.3 s at 10/s allowed %d", allowed)
	}
	for i := range maxSources + 10 {
		l.allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	if len(l.buckets) > maxSources {
		t.Fatalf("table grew to %d", len(l.buckets))
	}
}

// Start runs a responder on a kernel-chosen loopback port until the test ends.
func Start(t *testing.T, configure func(*Responder)) *net.UDPAddr {
	t.Helper()
	r := New(0, "127.0.0.1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.MinBackoff, r.MaxBackoff = 10*time.Millisecond, 100*time.Millisecond
	ready := make(chan net.Addr, 1)
	r.Ready = func(a net.Addr) { ready <- a }
	if configure != nil {
		configure(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("responder did not stop")
		}
	})
	select {
	case a := <-ready:
		return a.(*net.UDPAddr)
	case <-time.After(5 * time.Second):
		t.Fatal("responder did not start")
		return nil
	}
}

// exchange sends data and returns the answer, or nil when none came within wait.
func exchange(t *testing.T, conn *net.UDPConn, data []byte, wait time.Duration) []byte {
	t.Helper()
	if _, err := conn.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		t.Fatal(err)
	}
	return buf[:n]
}

func TestResponderEchoesRequestsAndIgnoresEverythingElse(t *testing.T) {
	addr := Start(t, nil)
	conn, err := net.DialUDP("udp", nil, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	req := Packet{Round: 1, Flow: 2, Seq: 3, SentNs: 4}.Marshal(40)
	got := exchange(t, conn, req, 2*time.Second)
	p, err := Decode(got)
	if err != nil || !p.Reply || p.Round != 1 || p.Flow != 2 || p.Seq != 3 || p.SentNs != 4 || len(got) != len(req) {
		t.Fatalf("reply %x: %+v %v", got, p, err)
	}

	reply := Packet{Reply: true, Round: 1}.Marshal(40)
	for name, data := range map[string][]byte{
		"foreign":      bytes.Repeat([]byte{0xff}, 40),
		"short":        req[:HeaderLen-1],
		"oversized":    append(Packet{Round: 1}.Marshal(MaxLen), make([]byte, 900)...),
		"a reply":      reply,
		"empty":        {},
		"magic only":   []byte(RequestMagic),
		"text request": []byte("FATHMEQ1 please echo this back to me, it is long enough"),
	} {
		if name == "text request" {
			// Well formed as far as the responder can tell: answered, with the same length.
			if answer := exchange(t, conn, data, 2*time.Second); len(answer) != len(data) {
				t.Errorf("%s: answer of %d bytes to %d", name, len(answer), len(data))
			}
			continue
		}
		if answer := exchange(t, conn, data, 150*time.Millisecond); answer != nil {
			t.Errorf("%s was answered: %x", name, answer)
		}
	}
	// Still answering after the junk.
	if got := exchange(t, conn, req, 2*time.Second); len(got) != len(req) {
		t.Fatal("responder stopped answering")
	}
}

func TestResponderRateLimitsASource(t *testing.T) {
	// The limiter's clock stands still: no token comes back however slowly a loaded
	// machine gets through the requests, so exactly the burst is answered.
	frozen := time.Unix(1000, 0)
	addr := Start(t, func(r *Responder) {
		r.RatePerSource, r.Burst = 1, 3
		r.Now = func() time.Time { return frozen }
	})
	conn, err := net.DialUDP("udp", nil, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for seq := range 10 {
		if _, err := conn.Write(Packet{Seq: uint16(seq)}.Marshal(HeaderLen)); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 256)
	// The burst's answers are expected: however late they come, they are waited for.
	for answers := range 3 {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Read(buf); err != nil {
			t.Fatalf("%d answers to 10 requests with a burst of 3: %v", answers, err)
		}
	}
	// Anything more is not: a short wait only ever misses a wrong answer, never fails a
	// right responder.
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(buf); err == nil {
		t.Fatalf("a 4th answer to 10 requests with a burst of 3 and no time passing: %x", buf[:n])
	}
}

func TestResponderCompletesTCPHandshakes(t *testing.T) {
	addr := Start(t, nil)
	conn, err := net.DialTimeout("tcp", addr.String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
}

// heldPort is a port this test holds on both UDP and TCP, as the responder takes both: a
// UDP port alone left its TCP twin to whatever else ran (CI of 2026-12-04: the responder
// never took a port whose TCP side another process's connection held).
func heldPort(t *testing.T) (int, func()) {
	t.Helper()
	for range 50 {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := udp.LocalAddr().(*net.UDPAddr).Port
		tcp, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			udp.Close()
			continue
		}
		return port, func() { udp.Close(); tcp.Close() }
	}
	t.Fatal("no port free on both UDP and TCP")
	return 0, nil
}

func TestResponderWaitsForItsPortAndStopsWithTheAgent(t *testing.T) {
	port, release := heldPort(t)
	started := make(chan net.Addr, 1)
	r := New(port, "127.0.0.1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.MinBackoff, r.MaxBackoff = 20*time.Millisecond, 50*time.Millisecond
	r.Ready = func(a net.Addr) { started <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	select {
	case <-started:
		t.Fatal("started on a port another socket holds")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case a := <-started:
		if a.(*net.UDPAddr).Port != port {
			t.Fatalf("listening on %v, want port %d", a, port)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not take the port once it was free")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		c.Close()
		t.Fatal("still listening after stop")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Packet{Round: 1, Flow: 2, Seq: 3, SentNs: 4}.Marshal(HeaderLen))
	f.Add(Packet{Reply: true, Round: 9, Flow: 63, Seq: 99, SentNs: -1}.Marshal(MaxLen))
	f.Add([]byte(RequestMagic))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			if Answer(bytes.Clone(data)) {
				t.Fatal("answered a packet Decode refuses")
			}
			return
		}
		if len(data) < HeaderLen || len(data) > MaxLen {
			t.Fatalf("decoded %d bytes", len(data))
		}
		if again, err := Decode(p.Marshal(len(data))); err != nil || again != p {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", p, again, err)
		}
		answer := bytes.Clone(data)
		answered := Answer(answer)
		if answered == p.Reply {
			t.Fatalf("reply=%v answered=%v", p.Reply, answered)
		}
		if answered {
			if len(answer) != len(data) || !bytes.Equal(answer[8:], data[8:]) {
				t.Fatal("an answer differs from its request beyond the magic")
			}
			if r, err := Decode(answer); err != nil || !r.Reply || Answer(answer) {
				t.Fatalf("answer %+v %v", r, err)
			}
		}
	})
}

// TestResponderOnAllAddressesAnswersFromTheAddressAsked: a responder listening on all
// addresses must reply from the address each request was sent to, or a prober with a
// connected socket (as flow sweeps use) drops every reply and records total loss. On Linux
// loopback every 127/8 address is local, and a reply from 127.0.0.5 that the kernel left to
// routing would leave from 127.0.0.1.
func TestResponderOnAllAddressesAnswersFromTheAddressAsked(t *testing.T) {
	for _, tc := range []struct{ name, bind, client, server string }{
		// Dual stack ([::]): the IPv4 request arrives IPv4-mapped.
		{"IPv4 to all addresses", "", "127.0.0.1", "127.0.0.5"},
		{"IPv4 to all IPv4 addresses", "0.0.0.0", "127.0.0.1", "127.0.0.6"},
		// Loopback has one IPv6 address, so this only shows IPv6 requests still answered.
		{"IPv6", "", "::1", "::1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := netip.MustParseAddr(tc.client), netip.MustParseAddr(tc.server)
			if server.Is6() {
				probe, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
				if err != nil {
					t.Skipf("no IPv6 on loopback: %v", err)
				}
				probe.Close()
			}
			port := Start(t, func(r *Responder) { r.Bind = tc.bind }).Port
			conn, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(client, 0)),
				net.UDPAddrFromAddrPort(netip.AddrPortFrom(server, uint16(port))))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req := Packet{Round: 5, Flow: 6, Seq: 7, SentNs: 8}.Marshal(64)
			got := exchange(t, conn, req, 2*time.Second)
			if p, err := Decode(got); err != nil || !p.Reply || p.Seq != 7 || len(got) != len(req) {
				t.Fatalf("no reply from %v (%x: %+v %v)", server, got, p, err)
			}
		})
	}
}
