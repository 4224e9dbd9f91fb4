package latency

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/reflector"
)

// startReflector runs the agent's reflector on 127.0.0.1, admitting peers, and returns its
// port and a function that stops it and returns what it counted.
func startReflector(t *testing.T, peers ...string) (*reflector.Service, int, func() twamp.Counts) {
	t.Helper()
	r := reflector.New(0, "127.0.0.1", 1000, hostclock.For(true), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ready := make(chan net.Addr, 1)
	r.Ready = func(a net.Addr) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	stop := func() twamp.Counts { cancel(); <-done; return r.Counts() }
	t.Cleanup(func() { cancel(); <-done })
	var port int
	select {
	case a := <-ready:
		port = a.(*net.UDPAddr).Port
	case <-time.After(10 * time.Second):
		t.Fatal("the reflector did not start")
	}
	var planned []plan.TwampPeer
	for _, p := range peers {
		planned = append(planned, plan.TwampPeer{Address: p, Port: port})
	}
	r.Admit(planned)
	return r, port, stop
}

// shortSpec is an interval of 2 s with 50 packets, shorter than a plan may hold.
func shortSpec(port int) Spec {
	return Spec{PacketIntervalS: 0.02, PacketTimeoutS: 1, SizeBytes: 64, DSCP: 46, Port: port, ReportIntervalS: 2}
}

func TestASessionAgainstTheAgentsReflectorOnLoopback(t *testing.T) {
	_, port, stop := startReflector(t, "127.0.0.1")
	spec := shortSpec(port)
	prober := New(hostclock.For(true))
	l, err := prober.Measure(context.Background(), spec, "127.0.0.1", time.Now().Add(spec.reportInterval()))
	if err != nil {
		t.Fatal(err)
	}
	counts := stop()
	// A loaded host may send fewer than 50 by the interval's end, never more.
	if l.Sent < 1 || l.Sent > 50 || l.Answered != l.Sent || l.Forward.Lost+l.Backward.Lost != 0 || counts.Answered != l.Sent {
		t.Fatalf("sent %d, answered %d, lost %d and %d; the reflector answered %d",
			l.Sent, l.Answered, l.Forward.Lost, l.Backward.Lost, counts.Answered)
	}
	// One clock at both ends: every delay is real; loopback is no hop either way.
	for name, d := range map[string]*float64{"forward": l.Forward.Delay.MinMs, "backward": l.Backward.Delay.MinMs, "round trip": l.RoundTrip.MinMs} {
		if d == nil || *d < 0 {
			t.Errorf("%s delay %v", name, d)
		}
	}
	if *l.Forward.Hops != 0 || *l.Backward.Hops != 0 || *l.Forward.ReorderedFraction != 0 || l.Forward.IPDVMs == nil {
		t.Errorf("%+v %+v", l.Forward, l.Backward)
	}
	// The lab's shared clock, as both ends declared it.
	if !l.SenderClock.Synchronized || l.ReflectorClock == nil || !l.ReflectorClock.Synchronized || l.ReflectorClock.ErrorMs > 0.0011 {
		t.Errorf("clocks %+v %+v", l.SenderClock, l.ReflectorClock)
	}
	if l.DSCP != 46 || l.SizeBytes != 64 || l.Port != port || l.PacketIntervalS != 0.02 {
		t.Errorf("options %+v", l)
	}
}

// A sender the plan does not name is not answered: everything is lost on the way there, a
// measurement and not a failure, and the reflector counts each packet refused.
func TestAReflectorRefusesASenderThePlanDoesNotName(t *testing.T) {
	_, port, stop := startReflector(t, "198.51.100.7", "2001:db8::7")
	spec := Spec{PacketIntervalS: 0.05, PacketTimeoutS: 0.2, SizeBytes: 41, Port: port, ReportIntervalS: 1}
	l, err := New(hostclock.For(true)).Measure(context.Background(), spec, "127.0.0.1", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	counts := stop()
	if l.Sent < 1 || l.Answered != 0 || l.Forward.Lost != l.Sent || l.Backward.Lost != 0 || l.ReflectorClock != nil {
		t.Fatalf("%+v", l)
	}
	if counts.Refused != l.Sent || counts.Answered != 0 {
		t.Fatalf("the reflector counted %+v of %d packets", counts, l.Sent)
	}
}

func TestNoReflectorListeningFailsTheRunAndSaysWhy(t *testing.T) {
	closed, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := closed.LocalAddr().(*net.UDPAddr).Port
	closed.Close()
	spec := Spec{PacketIntervalS: 0.05, PacketTimeoutS: 0.2, SizeBytes: 41, Port: port, ReportIntervalS: 1}
	_, err = New(hostclock.For(true)).Measure(context.Background(), spec, "127.0.0.1", time.Now().Add(time.Second))
	want := "no TWAMP-light reflector answered on 127.0.0.1:" + strconv.Itoa(port) + " (connection refused)"
	if err == nil || err.Error() != want {
		t.Fatalf("%v, want %q", err, want)
	}
}

func TestTheSocketCarriesTheTestsDSCP(t *testing.T) {
	for _, c := range []struct {
		network, address    string
		level, option, dscp int
	}{
		{"udp4", "127.0.0.1:862", syscall.IPPROTO_IP, syscall.IP_TOS, 46},    // EF: 184
		{"udp6", "[::1]:862", syscall.IPPROTO_IPV6, syscall.IPV6_TCLASS, 10}, // AF11: 40
	} {
		conn, err := net.Dial(c.network, c.address)
		if err != nil {
			t.Logf("%s: %v (no such loopback here)", c.network, err)
			continue
		}
		if err := setDSCP(conn.(*net.UDPConn), c.dscp); err != nil {
			t.Fatal(err)
		}
		raw, _ := conn.(*net.UDPConn).SyscallConn()
		var got int
		var getErr error
		_ = raw.Control(func(fd uintptr) { got, getErr = syscall.GetsockoptInt(int(fd), c.level, c.option) })
		conn.Close()
		if getErr != nil || got != c.dscp<<2 {
			t.Errorf("%s: the socket's traffic class is %d (%v), want %d", c.network, got, getErr, c.dscp<<2)
		}
	}
}

func TestARunThatCannotMeasureFailsWithItsReason(t *testing.T) {
	prober := New(hostclock.For(false))
	test := func(address, spec string) plan.Test {
		return plan.Test{ID: "latency:x", Type: TestType, IntervalS: 60, Spec: json.RawMessage(spec),
			Peer: plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Address: address}}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		test plan.Test
		want string
	}{
		{"invalid spec", context.Background(), test("127.0.0.1", `{"dscp": 64}`), "invalid latency spec: dscp 64 out of range"},
		{"no socket", context.Background(), test("fe80::1%no-such-interface", `{}`), "cannot open a UDP socket to the reflector at [fe80::1%no-such-interface]:862"},
		{"agent stopping", cancelled, test("127.0.0.1", `{}`), "latency cancelled (agent stopping)"},
	} {
		res := prober.Run(c.ctx, c.test, "v1")
		if res.Status != "failed" || !strings.HasPrefix(res.Error, c.want) || res.Latency != nil || res.TestType != TestType || *res.PeerID != c.test.Peer.ID {
			t.Errorf("%s: %s %q", c.name, res.Status, res.Error)
		}
	}
	if got := prober.Lasts(test("127.0.0.1", `{"report_interval_s": 300}`)); got != 5*time.Minute {
		t.Errorf("lasts %v", got)
	}
}
