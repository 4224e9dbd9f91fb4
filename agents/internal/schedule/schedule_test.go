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

func loadedAt(start time.Time, seconds int, agents ...string) plan.LoadedWindow {
	return plan.LoadedWindow{StartAt: start, EndAt: start.Add(time.Duration(seconds) * time.Second), AgentIDs: agents}
}

// A run is moved out of every window that loads either end of its path, and only those.
func TestClearStartMovesARunOutOfItsPathsLoadedWindows(t *testing.T) {
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	peer := loadedAt(at.Add(5*time.Second), 40, "peer", "third")
	mine := loadedAt(at.Add(46*time.Second), 30, "self", "other")
	elsewhere := loadedAt(at, 600, "third", "other")
	for _, c := range []struct {
		name    string
		windows []plan.LoadedWindow
		lasts   time.Duration
		want    time.Time
	}{
		{"no windows", nil, 10 * time.Second, at},
		{"another pair's test", []plan.LoadedWindow{elsewhere}, 10 * time.Second, at},
		{"ends before the peer's test, guard kept", []plan.LoadedWindow{peer}, 4 * time.Second, at},
		{"would run into the peer's test", []plan.LoadedWindow{peer}, 10 * time.Second, at.Add(46 * time.Second)},
		{"then into its own: after both", []plan.LoadedWindow{mine, peer}, 10 * time.Second, at.Add(77 * time.Second)},
	} {
		if got := ClearStart(c.windows, "self", "peer", at, c.lasts); !got.Equal(c.want) {
			t.Errorf("%s: start %s, want %s", c.name, got.Sub(at), c.want.Sub(at))
		}
	}
}

type stamps struct {
	mu  sync.Mutex
	ran []time.Time
}

func (s *stamps) run(context.Context, plan.Test, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran = append(s.ran, time.Now())
}

func (s *stamps) first(within time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		if len(s.ran) > 0 {
			first := s.ran[0]
			s.mu.Unlock()
			return first, true
		}
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	return time.Time{}, false
}

// A ping due while its peer is in an exclusive test waits until just after it; one whose
// interval leaves no room after the window runs on time (the server then leaves it out).
// "No room" is a 1 s interval against a clear start 2 s out: with 2 s, whether the run fits
// turned on how late the scheduler read the clock (over 100 ms in a loaded CI run).
func TestARunWaitsForThePeersExclusiveTestWhereItsIntervalAllows(t *testing.T) {
	for _, c := range []struct {
		name      string
		intervalS int
		moved     bool
	}{{"room before the next run", 3600, true}, {"no room", 1, false}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := &stamps{}
			s := New(ctx, rec.run)
			s.MaxFirstDelay = 0
			s.Lasts = func(plan.Test) time.Duration { return 100 * time.Millisecond }
			began := time.Now()
			window := loadedAt(began.Add(-time.Second), 2, "peer", "third") // ends 1 s from now
			ping := test("ping", c.intervalS)
			ping.Peer = plan.Peer{ID: "peer"}
			s.Apply(&plan.Plan{Version: "1", AgentID: "self", Tests: []plan.Test{ping}, LoadedWindows: []plan.LoadedWindow{window}})
			ran, ok := rec.first(5 * time.Second)
			if !ok {
				t.Fatal("the ping never ran")
			}
			afterWindow := !ran.Before(window.EndAt.Add(LoadGuard))
			if afterWindow != c.moved || (!c.moved && ran.Sub(began) > 1500*time.Millisecond) {
				t.Fatalf("ran %s after the start (window ends at %s, guard %s); want moved=%v",
					ran.Sub(began), window.EndAt.Sub(began), LoadGuard, c.moved)
			}
		})
	}
}

func TestSegmentEndCutsAtTheEdgesOfItsPathsLoadedWindows(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	minute := time.Minute
	peer := loadedAt(at.Add(20*time.Second), 30, "peer", "third") // 20..50 s, guarded 19..51 s
	overlapping := loadedAt(at.Add(45*time.Second), 20, "self", "other")
	elsewhere := loadedAt(at.Add(10*time.Second), 10, "third", "other")
	for _, c := range []struct {
		name    string
		windows []plan.LoadedWindow
		start   time.Time
		want    time.Duration // from at
	}{
		{"no windows: a whole interval", nil, at, 60 * time.Second},
		{"another pair's test is no edge", []plan.LoadedWindow{elsewhere}, at, 60 * time.Second},
		{"up to the window, guard kept", []plan.LoadedWindow{peer}, at, 19 * time.Second},
		{"through it, to its end", []plan.LoadedWindow{peer}, at.Add(19 * time.Second), 51 * time.Second},
		{"merged with the next window", []plan.LoadedWindow{peer, overlapping}, at.Add(19 * time.Second), 66 * time.Second},
		{"an edge just past the interval: no stub after it", []plan.LoadedWindow{loadedAt(at.Add(64*time.Second), 10, "peer")}, at, 63 * time.Second},
		{"an edge too close to the start is not cut at", []plan.LoadedWindow{loadedAt(at.Add(4*time.Second), 100, "self")}, at, 60 * time.Second},
	} {
		if got := SegmentEnd(c.windows, "self", "peer", c.start, minute); !got.Equal(at.Add(c.want)) {
			t.Errorf("%s: ends at %s, want %s", c.name, got.Sub(at), c.want)
		}
	}
}

func TestSegmentStartSkipsTheTailOfALoadedWindow(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	window := loadedAt(at.Add(-20*time.Second), 22, "peer", "third") // guarded to 3 s from at
	for _, c := range []struct {
		name  string
		start time.Time
		want  time.Time
	}{
		{"3 s before the window's end: after it", at, at.Add(3 * time.Second)},
		{"deep inside: cut at its end instead", at.Add(-10 * time.Second), at.Add(-10 * time.Second)},
		{"outside it", at.Add(4 * time.Second), at.Add(4 * time.Second)},
	} {
		if got := SegmentStart([]plan.LoadedWindow{window}, "self", "peer", c.start); !got.Equal(c.want) {
			t.Errorf("%s: starts at %s, want %s", c.name, got.Sub(at), c.want.Sub(at))
		}
	}
	if got := SegmentStart([]plan.LoadedWindow{window}, "self", "other", at); !got.Equal(at) {
		t.Errorf("another path's window moved the start to %s", got.Sub(at))
	}
}

// A test whose runs fill their interval runs back to back, each run told its end, and is
// cut where its peer's exclusive test begins and ends.
func TestARunThatFillsItsIntervalIsCutAtTheLoadedWindow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type run struct{ began, end time.Time }
	runs := make(chan run, 8)
	s := New(ctx, func(ctx context.Context, _ plan.Test, _ string) {
		end, ok := plan.RunEnd(ctx)
		if !ok {
			t.Error("a run that fills its interval was not told its end")
		}
		runs <- run{time.Now(), end}
		time.Sleep(time.Until(end))
	})
	s.MaxFirstDelay = 0
	s.Lasts = func(test plan.Test) time.Duration { return time.Duration(test.IntervalS) * time.Second }
	began := time.Now()
	// Both pieces as short as SegmentEnd cuts: 6 s up to the window, then 7 s through it.
	window := loadedAt(began.Add(MinSegment+2*time.Second), 5, "peer", "third")
	latency := test("latency", 60)
	latency.Peer = plan.Peer{ID: "peer"}
	s.Apply(&plan.Plan{Version: "1", AgentID: "self", Tests: []plan.Test{latency}, LoadedWindows: []plan.LoadedWindow{window}})
	want := []time.Time{window.StartAt.Add(-LoadGuard), window.EndAt.Add(LoadGuard)}
	var previous time.Time
	for i, end := range want {
		select {
		case r := <-runs:
			if !r.end.Equal(end) {
				t.Fatalf("run %d ends %s after the start, want %s", i, r.end.Sub(began), end.Sub(began))
			}
			if i > 0 && r.began.Sub(previous) > 200*time.Millisecond {
				t.Fatalf("run %d began %s after the one before it ended: not back to back", i, r.began.Sub(previous))
			}
			previous = r.end
		case <-time.After(20 * time.Second):
			t.Fatalf("run %d never came", i)
		}
	}
}
