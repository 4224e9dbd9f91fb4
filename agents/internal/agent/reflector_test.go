package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/api"
	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/schedule"
)

// The reflector answers the plan's twamp_peers, as the iperf3 server admits its users: a
// new plan replaces them, and an expired plan leaves no one admitted.
func TestTheReflectorAdmitsThePlansTwampPeersUntilThePlanExpires(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	defer server.Close()
	base, _ := url.Parse(server.URL)
	cfg := config.Defaults()
	cfg.StateDir, cfg.Iperf3.Enabled = t.TempDir(), false
	a, err := New(cfg, api.New(base, "a", "secret", "test"), "test", clock.Real, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sched := &schedulers{tests: schedule.New(ctx, a.runTest), slots: schedule.NewSlots(ctx, a.runSlot, "")}
	defer func() { cancel(); sched.Wait() }()
	admits := func(address string) bool { return a.reflector.Admits(netip.MustParseAddr(address)) }

	now := time.Now()
	a.adopt(sched, &plan.Plan{SchemaVersion: 1, Version: "v1", ValidUntil: now.Add(time.Hour),
		TwampPeers: []plan.TwampPeer{{Address: "198.18.2.2", Port: 862}, {Address: "[2001:db8::7]", Port: 862}}}, "test")
	if !admits("198.18.2.2") || !admits("::ffff:198.18.2.2") || !admits("2001:db8::7") || admits("198.18.2.3") {
		t.Fatal("the plan's peers are not what the reflector admits")
	}
	a.adopt(sched, &plan.Plan{SchemaVersion: 1, Version: "v2", ValidUntil: now.Add(time.Hour),
		TwampPeers: []plan.TwampPeer{{Address: "198.18.2.3", Port: 862}}}, "test")
	if admits("198.18.2.2") || !admits("198.18.2.3") {
		t.Fatal("a new plan's peers did not replace the old ones")
	}

	expired := *a.current.Load()
	expired.ValidUntil = now.Add(-time.Second)
	a.current.Store(&expired)
	a.refreshPlan(ctx, sched, `"v2"`)
	if admits("198.18.2.3") || a.current.Load() != nil {
		t.Fatal("an expired plan's peers are still admitted")
	}

	cfg.Twamp.Enabled = false
	if off, err := New(cfg, nil, "test", clock.Real, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil || off.reflector != nil {
		t.Fatalf("twamp.enabled off: %+v %v", off.reflector, err)
	}
}
