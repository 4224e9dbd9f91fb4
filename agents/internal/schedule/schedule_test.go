package schedule

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/plan"
)

type recorder struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *recorder) run(_ context.Context, test plan.Test, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[test.ID]++
}

func (r *recorder) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[id]
}

func test(id string, intervalS int) plan.Test {
	return plan.Test{ID: id, Type: "ping", IntervalS: intervalS, Spec: json.RawMessage(`{}`)}
}

func TestApplyStartsChangesAndStopsLoops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{runs: map[string]int{}}
	s := New(ctx, rec.run)
	s.MaxFirstDelay = 0

	s.Apply(&plan.Plan{Version: "1", Tests: []plan.Test{test("a", 1), test("b", 3600)}})
	ids := s.Running()
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("running %v", ids)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rec.count("a") < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if rec.count("a") < 2 || rec.count("b") != 1 {
		t.Fatalf("runs a=%d (want >=2 at 1 s) b=%d (want 1 at 1 h)", rec.count("a"), rec.count("b"))
	}

	// b unchanged keeps its loop (no second immediate run); a removed; c added.
	s.Apply(&plan.Plan{Version: "2", Tests: []plan.Test{test("b", 3600), test("c", 3600)}})
	ids = s.Running()
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"b", "c"}) {
		t.Fatalf("running %v", ids)
	}
	time.Sleep(100 * time.Millisecond)
	if rec.count("b") != 1 {
		t.Fatal("an unchanged test was restarted")
	}

	s.Apply(nil)
	s.Wait()
	if len(s.Running()) != 0 {
		t.Fatal("Apply(nil) left loops running")
	}
}

func TestChangedIntervalRestartsTheLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{runs: map[string]int{}}
	s := New(ctx, rec.run)
	s.MaxFirstDelay = 0
	s.Apply(&plan.Plan{Tests: []plan.Test{test("a", 3600)}})
	waitFor(t, func() bool { return rec.count("a") == 1 })
	s.Apply(&plan.Plan{Tests: []plan.Test{test("a", 1800)}})
	waitFor(t, func() bool { return rec.count("a") == 2 })
	cancel()
	s.Wait()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A test build's clock shortens the intervals: an hourly test at rate 3600 runs every second.
func TestTheClockTimesTheIntervals(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{runs: map[string]int{}}
	s := New(ctx, rec.run)
	s.Clock = clock.Scaled(3600)
	s.Apply(&plan.Plan{Version: "1", Tests: []plan.Test{test("hourly", 3600)}})
	deadline := time.Now().Add(5 * time.Second)
	for rec.count("hourly") < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := rec.count("hourly"); n < 3 {
		t.Fatalf("%d runs of an hourly test in 5 s at rate 3600, want 3 or more", n)
	}
	s.Apply(nil)
	s.Wait()
}
