package twamp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// reflectorOn starts a reflector on loopback that admits `admit`, and returns its address
// and a function that stops it and returns what it counted.
func reflectorOn(t *testing.T, admit func(netip.Addr) bool, rate, burst float64) (netip.AddrPort, func() Counts) {
	t.Helper()
	return reflectorListening(t, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, admit, rate, burst)
}

// reflectorListening is reflectorOn at any address: all of them when listen's IP is nil.
func reflectorListening(t *testing.T, listen *net.UDPAddr, admit func(netip.Addr) bool, rate, burst float64) (netip.AddrPort, func() Counts) {
	t.Helper()
	conn, err := Listen(context.Background(), listen.String())
	if err != nil {
		t.Fatal(err)
	}
	synced := func() ErrorEstimate { return NewErrorEstimate(true, time.Millisecond) }
	r := &Reflector{Conn: conn, Admit: admit, Error: synced, Rate: rate, Burst: burst}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Counts, 1)
	go func() {
		counts, err := r.Serve(ctx)
		if err != nil {
			t.Errorf("reflector: %v", err)
		}
		done <- counts
	}()
	stop := func() Counts {
		cancel()
		counts := <-done
		conn.Close()
		return counts
	}
	t.Cleanup(func() { cancel() })
	return conn.LocalAddr().(*net.UDPAddr).AddrPort(), stop
}

func dial(t *testing.T, to netip.AddrPort) *net.UDPConn {
	t.Helper()
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func everyone(netip.Addr) bool { return true }

func TestASessionOnLoopbackMeasuresBothWaysAndLosesNothing(t *testing.T) {
	at, stop := reflectorOn(t, everyone, 1000, 100)
	session := Session{Count: 20, Interval: 5 * time.Millisecond, Size: 64, Linger: time.Second, Error: NewErrorEstimate(true, time.Millisecond)}
	out, err := session.Measure(context.Background(), dial(t, at))
	if err != nil {
		t.Fatal(err)
	}
	counts := stop()
	if out.Sent != 20 || len(out.Replies) != 20 || out.ForwardLost != 0 || out.BackwardLost != 0 || out.Duplicates != 0 {
		t.Fatalf("%+v", out)
	}
	if counts.Answered != 20 || counts.Refused+counts.Limited+counts.Malformed != 0 {
		t.Fatalf("reflector %+v", counts)
	}
	for i, r := range out.Replies {
		// One host's clock both ends: every delay is real, and the two ways add up.
		if r.Forward() < 0 || r.Backward() < 0 || r.RoundTrip() > 200*time.Millisecond ||
			(r.Forward()+r.Backward()-r.RoundTrip()).Abs() > time.Microsecond {
			t.Errorf("reply %d: forward %v back %v round trip %v", i, r.Forward(), r.Backward(), r.RoundTrip())
		}
		// Both ends send with TTL 255, and loopback is no hop.
		if r.SenderTTL != 255 || r.ReplyTTL != 255 || !r.ReflectorErr.Synced() {
			t.Errorf("reply %d: ttl %d back %d, error estimate %#04x", i, r.SenderTTL, r.ReplyTTL, uint16(r.ReflectorErr))
		}
	}
}

func TestAReflectorAnswersItsPlannedPeersOnlyAndAtTheirRate(t *testing.T) {
	nobody := func(netip.Addr) bool { return false }
	at, stop := reflectorOn(t, nobody, 1000, 100)
	out, err := Session{Count: 5, Interval: time.Millisecond, Size: 41, Linger: 200 * time.Millisecond}.Measure(context.Background(), dial(t, at))
	if err != nil {
		t.Fatal(err)
	}
	if counts := stop(); len(out.Replies) != 0 || out.ForwardLost != 5 || counts.Refused != 5 || counts.Answered != 0 {
		t.Fatalf("a stranger was answered: %+v %+v", out, counts)
	}

	// A burst of 3 and a packet every 10 s: 10 packets in 20 ms get 3 answers.
	at, stop = reflectorOn(t, everyone, 0.1, 3)
	out, err = Session{Count: 10, Interval: 2 * time.Millisecond, Size: 41, Linger: 200 * time.Millisecond}.Measure(context.Background(), dial(t, at))
	if err != nil {
		t.Fatal(err)
	}
	// The limited packets reached the reflector but were never numbered: they count as lost
	// on the way there, as the sender sees it.
	if counts := stop(); len(out.Replies) != 3 || counts.Limited != 7 || out.ForwardLost != 7 || out.BackwardLost != 0 {
		t.Fatalf("rate limit: %+v %+v", out, counts)
	}
}

func TestMalformedDatagramsChangeNothing(t *testing.T) {
	at, stop := reflectorOn(t, everyone, 1000, 100)
	conn := dial(t, at)
	for _, junk := range [][]byte{{}, make([]byte, 13), make([]byte, MaxPacketSize+1)} {
		if _, err := conn.Write(junk); err != nil {
			t.Fatal(err)
		}
	}
	out, err := Session{Count: 3, Interval: time.Millisecond, Size: 41, Linger: 300 * time.Millisecond}.Measure(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	counts := stop()
	if len(out.Replies) != 3 || counts.Malformed != 3 || counts.Answered != 3 {
		t.Fatalf("%+v %+v", out, counts)
	}
	// The reflector numbered only what it answered: no loss read into the junk.
	if out.ForwardLost != 0 || out.BackwardLost != 0 {
		t.Fatalf("%+v", out)
	}
}

func TestLossesAreToldApartByTheReflectorsNumbers(t *testing.T) {
	reply := func(seq, reflected uint32) Reply { return Reply{Seq: seq, ReflectorSeq: reflected} }
	// 10 sent; the reflector answered 8 (numbers 0-7); answers 2 and 5 were lost coming back.
	out := Outcome{Sent: 10, Replies: []Reply{reply(0, 0), reply(1, 1), reply(3, 3), reply(4, 4), reply(6, 6), reply(8, 7)}}
	out.lose()
	if out.ForwardLost != 2 || out.BackwardLost != 2 {
		t.Fatalf("%+v", out)
	}
	// A reflector that numbers past what was sent cannot make packets up.
	wild := Outcome{Sent: 2, Replies: []Reply{reply(0, 99)}}
	wild.lose()
	if wild.ForwardLost != 0 || wild.BackwardLost != 1 {
		t.Fatalf("%+v", wild)
	}
	// One that restarted its count (0-4, then 0-2) answered at least what came back: the
	// losses never add up to more than was sent.
	restarted := Outcome{Sent: 10, Replies: []Reply{reply(0, 0), reply(1, 1), reply(2, 2), reply(3, 3), reply(4, 4),
		reply(5, 0), reply(6, 1), reply(7, 2)}}
	restarted.lose()
	if restarted.ForwardLost != 2 || restarted.BackwardLost != 0 {
		t.Fatalf("%+v", restarted)
	}
}

func TestASessionToNoReflectorSaysThePortIsUnreachable(t *testing.T) {
	closed, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	at := closed.LocalAddr().(*net.UDPAddr).AddrPort()
	closed.Close()
	out, err := Session{Count: 5, Interval: 5 * time.Millisecond, Size: 41, Linger: 200 * time.Millisecond}.Measure(context.Background(), dial(t, at))
	if err != nil {
		t.Fatal(err)
	}
	// Loopback answers each packet with a port unreachable: the session goes on, all lost.
	if out.Sent != 5 || len(out.Replies) != 0 || out.ForwardLost != 5 || out.Unreachable == 0 ||
		!errors.Is(out.UnreachableErr, syscall.ECONNREFUSED) {
		t.Fatalf("%+v", out)
	}
}

func TestASessionEndsByItsUntilWhateverItsCount(t *testing.T) {
	at, stop := reflectorOn(t, everyone, 1000, 1000)
	defer stop()
	// A clock 10 ms further at each reading: the session's own pace cannot matter.
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var readings atomic.Int64
	fake := func() time.Time { return start.Add(time.Duration(readings.Add(1)) * 10 * time.Millisecond) }
	session := Session{Count: 100, Interval: time.Millisecond, Size: 41, Linger: 50 * time.Millisecond,
		Until: start.Add(200 * time.Millisecond), Now: fake}
	out, err := session.Measure(context.Background(), dial(t, at))
	if err != nil {
		t.Fatal(err)
	}
	// At most 15 readings before the last send may lie 50 ms before 200 ms.
	if out.Sent < 1 || out.Sent > 15 || out.Sent != len(out.Replies)+out.ForwardLost+out.BackwardLost {
		t.Fatalf("sent %d of 100 by its end: %+v", out.Sent, out)
	}
}

// A reflector listening on all addresses answers from the address each packet was sent to:
// the sender's connected socket drops an answer from any other. On Linux loopback every
// 127/8 address is local, and an answer left to routing would leave from 127.0.0.1.
func TestAReflectorOnAllAddressesAnswersFromTheAddressAsked(t *testing.T) {
	at, stop := reflectorListening(t, &net.UDPAddr{}, everyone, 1000, 100)
	defer stop()
	asked := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.5"), at.Port())
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, net.UDPAddrFromAddrPort(asked))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out, err := Session{Count: 3, Interval: time.Millisecond, Size: 41, Linger: time.Second}.Measure(context.Background(), conn)
	if err != nil || len(out.Replies) != 3 {
		t.Fatalf("%+v %v", out, err)
	}
	// A dual-stack socket reads the IPv4 packets' TTL too.
	if out.Replies[0].SenderTTL != 255 || out.Replies[0].ReplyTTL != 255 {
		t.Fatalf("%+v", out.Replies[0])
	}
}

func TestASessionRefusesWhatItCannotSend(t *testing.T) {
	at, stop := reflectorOn(t, everyone, 1000, 100)
	defer stop()
	for _, bad := range []Session{{Count: 0, Interval: time.Millisecond, Size: 41}, {Count: 1, Interval: 0, Size: 41}, {Count: 1, Interval: time.Millisecond, Size: 40}} {
		if _, err := bad.Measure(context.Background(), dial(t, at)); err == nil {
			t.Errorf("%+v was sent", bad)
		}
	}
}
