package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/schedule"
)

// A plan's iperf3 windows reach the opener, which keeps off the agent's own ports; with
// iperf3.perfsonar_windows or iperf3.enabled off there is no opener at all.
func TestThePlansIperf3WindowsAreOpened(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "iperf3")
	script := "#!/bin/sh\ncase \"$1\" in --version) echo 'iperf 3.12'; exit 0;; esac\necho \"$*\" >> " + dir + "/args\nexec sleep 30\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	newAgent := func(change func(*config.Config)) *Agent {
		cfg := config.Defaults()
		cfg.StateDir, cfg.Iperf3.Binary, cfg.Iperf3.Bind = t.TempDir(), fake, "127.0.0.1"
		change(&cfg)
		a, err := New(cfg, nil, "test", clock.Real, quiet)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := newAgent(func(c *config.Config) { c.Iperf3.PerfsonarWindows = false }); a.windows != nil {
		t.Fatal("windows opened with iperf3.perfsonar_windows off")
	}
	if a := newAgent(func(c *config.Config) { c.Iperf3.Enabled = false }); a.windows != nil {
		t.Fatal("windows opened with iperf3.enabled off")
	}

	a := newAgent(func(*config.Config) {})
	if a.windows == nil || !slices.Equal(a.windows.Reserved, []int{5201, 5202, 862}) || a.windows.Bind != "127.0.0.1" {
		t.Fatalf("opener %+v", a.windows)
	}
	a.windows.Lead = 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.windows.Run(ctx); close(done) }()
	sched := &schedulers{tests: schedule.New(ctx, a.runTest), slots: schedule.NewSlots(ctx, a.runSlot, "")}
	defer func() { cancel(); <-done; sched.Wait() }()
	now := time.Now()
	a.adopt(sched, &plan.Plan{SchemaVersion: 1, Version: "v1", ValidUntil: now.Add(time.Hour), Iperf3Windows: []plan.Iperf3Window{
		{SlotID: "on-echo", StartAt: now, EndAt: now.Add(time.Hour), Port: 5202, PeerName: "ps", PeerAddress: "198.18.9.9"},
		{SlotID: "ok", StartAt: now, EndAt: now.Add(time.Hour), Port: 5203, PeerName: "ps", PeerAddress: "198.18.9.9"},
	}}, "test")
	var args []byte
	for deadline := time.Now().Add(5 * time.Second); len(args) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the plan's window was not opened")
		}
		args, _ = os.ReadFile(filepath.Join(dir, "args"))
	}
	if got := strings.TrimSpace(string(args)); got != "-s -1 -p 5203 -B 127.0.0.1 --forceflush" {
		t.Fatalf("window server %q", got)
	}
}
