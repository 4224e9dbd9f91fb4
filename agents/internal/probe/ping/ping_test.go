package ping

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func loopbackTest(spec string) plan.Test {
	return plan.Test{
		ID: "ping:peer", Type: TestType, IntervalS: 60,
		Peer: plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Name: "peer", Address: "127.0.0.1"},
		Spec: json.RawMessage(spec),
	}
}

func TestRunRealPingOnLoopback(t *testing.T) {
	res := New().Run(context.Background(), loopbackTest(`{"count": 3, "interval_s": 0.2, "size_bytes": 100, "ttl": 8}`), "v1")
	if res.Status != result.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	if res.Ping.Transmitted != 3 || res.Ping.Received != 3 || len(res.Ping.Samples) != 3 {
		t.Fatalf("ping: %+v", res.Ping)
	}
	if *res.Ping.TTL != 8 || res.Ping.SizeBytes != 100 || res.PlanVersion != "v1" || *res.PeerID != "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f" {
		t.Fatalf("result: %+v", res)
	}
	if !res.EndedAt.After(res.StartedAt) {
		t.Fatalf("ended %v before started %v", res.EndedAt, res.StartedAt)
	}
}

func TestRunRealPingOnIPv6Loopback(t *testing.T) {
	if l, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback:", err)
	} else {
		l.Close()
	}
	test := loopbackTest(`{"count": 3, "interval_s": 0.2, "size_bytes": 56}`)
	test.Peer.Address = "[::1]" // URL notation, as an address may come from a form
	res := New().Run(context.Background(), test, "v1")
	if res.Status != result.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	if res.Ping.Transmitted != 3 || res.Ping.Received != 3 || res.Ping.Samples[0].RTTMs == nil {
		t.Fatalf("every reply from ::1 must count: %+v", res.Ping)
	}
}

func TestRunFailuresCarryTheirReason(t *testing.T) {
	missing := &Prober{Binary: "/nonexistent/ping", Now: time.Now, ReplyWait: time.Second}
	res := missing.Run(context.Background(), loopbackTest(`{"count": 1, "interval_s": 1, "size_bytes": 56}`), "")
	if res.Status != result.StatusFailed || !strings.Contains(res.Error, "ping cannot run") {
		t.Fatalf("missing binary: %s %q", res.Status, res.Error)
	}
	unknown := loopbackTest(`{"count": 1, "interval_s": 1, "size_bytes": 56}`)
	unknown.Peer.Address = "no-such-host.invalid"
	res = New().Run(context.Background(), unknown, "")
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "ping: ") {
		t.Fatalf("unknown host: %s %q", res.Status, res.Error)
	}
	for _, spec := range []string{`{"count": 0}`, `{"count": 1, "interval_s": 0.0001}`, `{"colour": 1}`, `[1]`, `{"ttl": 300}`} {
		res = New().Run(context.Background(), loopbackTest(spec), "")
		if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "invalid ping spec") {
			t.Fatalf("%s: %s %q", spec, res.Status, res.Error)
		}
	}
}

func TestRunIsCancelledWithTheAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	res := New().Run(ctx, loopbackTest(`{"count": 50, "interval_s": 1, "size_bytes": 56}`), "")
	if res.Status != result.StatusFailed || !strings.Contains(res.Error, "cancelled") {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
}

func TestArgs(t *testing.T) {
	ttl := 5
	got := strings.Join(Args(Spec{Count: 10, IntervalS: 0.5, SizeBytes: 56, TTL: &ttl}, "198.18.1.2", 2500*time.Millisecond), " ")
	want := "-D -n -c 10 -i 0.5 -s 56 -W 3 -t 5 -4 -- 198.18.1.2"
	if got != want {
		t.Fatalf("args %q, want %q", got, want)
	}
	for address, want := range map[string]string{
		"[2001:db8::1]": "-6 -- 2001:db8::1", "2001:db8::1": "-6 -- 2001:db8::1", "peer.example": "-W 1 -- peer.example",
	} {
		if got := strings.Join(Args(DefaultSpec(), address, time.Second), " "); !strings.HasSuffix(got, want) {
			t.Errorf("%s: args %q, want ...%q", address, got, want)
		}
	}
}
