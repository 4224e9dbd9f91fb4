package agent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/contract"
	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe/flowsweep"
	"github.com/fathom-net/fathom/agents/internal/probe/latency"
	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/probe/throughput"
	"github.com/fathom-net/fathom/agents/internal/probe/trace"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func TestEveryProbeTypeIsRegisteredWithItsConfiguredBinary(t *testing.T) {
	cfg := config.Defaults()
	cfg.Ping.Binary, cfg.Iperf3.Binary, cfg.Trace.Binary = "/opt/ping", "/opt/iperf3", "/opt/traceroute"
	probes := Probes(cfg)
	if len(probes) != 5 {
		t.Fatalf("%d probes", len(probes))
	}
	if p, ok := probes[ping.TestType].(*ping.Prober); !ok || p.Binary != "/opt/ping" {
		t.Errorf("ping: %#v", probes[ping.TestType])
	}
	if p, ok := probes[throughput.TestType].(*throughput.Prober); !ok || p.Binary != "/opt/iperf3" {
		t.Errorf("throughput: %#v", probes[throughput.TestType])
	}
	if p, ok := probes[trace.TestType].(*trace.Prober); !ok || p.Binary != "/opt/traceroute" {
		t.Errorf("trace: %#v", probes[trace.TestType])
	}
	if _, ok := probes[flowsweep.TestType].(*flowsweep.Prober); !ok {
		t.Errorf("flowsweep: %#v", probes[flowsweep.TestType])
	}
	if p, ok := probes[latency.TestType].(*latency.Prober); !ok || p.Clock == nil {
		t.Errorf("latency: %#v", probes[latency.TestType])
	}
	// The lab's shared clock reaches the packets' error estimate.
	cfg.Twamp.ClockShared = true
	if state, err := Probes(cfg)[latency.TestType].(*latency.Prober).Clock(); err != nil || state != hostclock.Shared {
		t.Errorf("clock_shared: %+v %v", state, err)
	}
}

// The scheduler keeps pings and sweeps out of exclusive tests for as long as they last.
func TestPingsAndSweepsTellHowLongTheyLast(t *testing.T) {
	probes := Probes(config.Defaults())
	for _, c := range []struct {
		kind, spec string
		want       time.Duration
	}{
		{ping.TestType, `{}`, 12 * time.Second}, // 10 packets 1 s apart, 3 s for the last reply
		{ping.TestType, `{"count": 5, "interval_s": 0.2}`, 3800 * time.Millisecond},
		{flowsweep.TestType, `{}`, 4200 * time.Millisecond}, // 160 probes 20 ms apart, then 1 s
		{ping.TestType, `{"count": "many"}`, 0},             // unreadable: the scheduler's default
		{trace.TestType, `{}`, 0},
		{latency.TestType, `{}`, time.Minute}, // a run fills its report interval
		{latency.TestType, `{"report_interval_s": 600}`, 10 * time.Minute},
	} {
		test := plan.Test{ID: "t", Type: c.kind, IntervalS: 300, Spec: json.RawMessage(c.spec)}
		if got := probes.Lasts(test); got != c.want {
			t.Errorf("%s %s lasts %s, want %s", c.kind, c.spec, got, c.want)
		}
	}
}

func TestSlotsAreSpooledWithTheirIDMissedOrRun(t *testing.T) {
	cfg := config.Defaults()
	cfg.StateDir = t.TempDir()
	a, err := New(cfg, nil, "test", clock.Real, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	peer := plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Name: "frankfurt", Address: "198.18.2.1"}
	missed := plan.Slot{ID: "5d0c3e8a-1f2b-4c6d-9e7f-8a9b0c1d2e3f", TestID: "m/tput:x", Type: "throughput",
		StartAt: start, Peer: peer, Spec: json.RawMessage(`{}`)}
	a.runSlot(context.Background(), missed, "v1", "the agent was not running at the slot's start (1h0m0s late)")
	unknown := missed
	unknown.ID, unknown.Type = "5d0c3e8a-1f2b-4c6d-9e7f-8a9b0c1d2e40", "owamp"
	a.runSlot(context.Background(), unknown, "v1", "")
	entries, err := a.spool.Pending(10)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%d spooled, %v", len(entries), err)
	}
	byStatus := map[string]result.Result{}
	for _, e := range entries {
		byStatus[e.Result.Status] = e.Result
	}
	m, f := byStatus[result.StatusMissed], byStatus[result.StatusFailed]
	if m.SlotID == nil || *m.SlotID != missed.ID || !m.StartedAt.Equal(start.UTC()) || !strings.Contains(m.Error, "not running") {
		t.Errorf("missed slot result %+v", m)
	}
	if f.SlotID == nil || *f.SlotID != unknown.ID || !strings.Contains(f.Error, `no "owamp" probe`) {
		t.Errorf("failed slot result %+v", f)
	}
}

// Every test kind of the contract has a probe, and every probe a test kind of the contract.
func TestEveryContractTestKindHasAProbe(t *testing.T) {
	kinds := contract.Enum(t, contract.Load(t, "plan.v1.schema.json"), "$defs", "TestKind")
	registered := make([]string, 0, len(kinds))
	for kind := range Probes(config.Defaults()) {
		registered = append(registered, kind)
	}
	contract.SameSet(t, "test kinds", kinds, registered)
}
