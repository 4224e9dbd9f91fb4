// Package schedule runs the plan's tests at their intervals. It is the agent's one scheduler:
// each test has its own loop, so a slow run delays only itself and never overlaps itself,
// and a new plan changes only the tests that changed. A run that would overlap an exclusive
// test on either end of its path (the plan's loaded windows) waits until just after it,
// where that still ends before the test's next run; otherwise it runs as planned and the
// server leaves what it measured under that load out of the analysis.
package schedule

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/plan"
)

// RunFunc runs one test once.
type RunFunc func(ctx context.Context, test plan.Test, planVersion string)

// DefaultLasts is how long a run is taken to last when Lasts has no better estimate.
const DefaultLasts = 10 * time.Second

// LoadGuard keeps a moved run this far from a loaded window: the two agents' clocks and the
// test's own start and teardown differ by about that much.
const LoadGuard = time.Second

// Scheduler keeps one loop per planned test.
type Scheduler struct {
	run RunFunc
	// Clock times the intervals (Real unless a test build speeds it up); the probes stamp
	// their runs with the wall clock.
	Clock clock.Clock
	// MaxFirstDelay bounds the random offset of a test's first run, so a new mesh shows data
	// quickly while agents still spread their probes out.
	MaxFirstDelay time.Duration
	// Lasts estimates how long a run of a test takes (nil or 0: DefaultLasts).
	Lasts func(plan.Test) time.Duration
	ctx   context.Context
	mu    sync.Mutex
	loops map[string]*loop
	wg    sync.WaitGroup
	// The newest plan's loaded windows and the agent's own id, read at each run.
	loaded []plan.LoadedWindow
	self   string
}

type loop struct {
	fingerprint string
	cancel      context.CancelFunc
}

// New returns a scheduler whose loops live until ctx ends.
func New(ctx context.Context, run RunFunc) *Scheduler {
	return &Scheduler{run: run, MaxFirstDelay: 15 * time.Second, ctx: ctx, loops: map[string]*loop{}}
}

func fingerprint(t plan.Test) string {
	data, _ := json.Marshal(t)
	return string(data)
}

// Apply makes the running loops match the plan's tests; nil stops everything.
func (s *Scheduler) Apply(p *plan.Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wanted := map[string]plan.Test{}
	version := ""
	s.loaded, s.self = nil, ""
	if p != nil {
		version = p.Version
		s.loaded, s.self = p.LoadedWindows, p.AgentID
		for _, t := range p.Tests {
			wanted[t.ID] = t
		}
	}
	for id, l := range s.loops {
		if t, ok := wanted[id]; !ok || fingerprint(t) != l.fingerprint {
			l.cancel()
			delete(s.loops, id)
		}
	}
	for id, t := range wanted {
		if _, running := s.loops[id]; running {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		s.loops[id] = &loop{fingerprint: fingerprint(t), cancel: cancel}
		s.wg.Add(1)
		go s.every(ctx, t, version)
	}
}

// Running lists the ids of the tests being scheduled.
func (s *Scheduler) Running() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.loops))
	for id := range s.loops {
		ids = append(ids, id)
	}
	return ids
}

// Wait blocks until every loop has ended (after ctx is cancelled or Apply(nil)).
func (s *Scheduler) Wait() { s.wg.Wait() }

func (s *Scheduler) every(ctx context.Context, t plan.Test, version string) {
	defer s.wg.Done()
	interval := s.Clock.Scale(time.Duration(t.IntervalS) * time.Second)
	first := min(interval, s.Clock.Scale(s.MaxFirstDelay))
	next := time.Now().Add(time.Duration(rand.Int64N(int64(first) + 1)))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		if s.fills(t) {
			s.segments(ctx, t, version, next, interval)
			return
		}
		// Out of an exclusive test on its path, where it still ends before its next run.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(s.startClear(t, time.Now(), next.Add(interval)))):
		}
		s.run(ctx, t, version)
		// Keep the cadence; skip slots a long run overran instead of bunching them up.
		next = next.Add(interval)
		for !next.After(time.Now()) {
			next = next.Add(interval)
		}
	}
}

// fills reports whether the test's runs fill their interval, back to back (a latency
// session): such a test cannot wait for a loaded window to pass, so its runs are cut there.
func (s *Scheduler) fills(t plan.Test) bool {
	return s.Lasts != nil && s.Lasts(t) >= time.Duration(t.IntervalS)*time.Second
}

// segments runs a test that fills its interval back to back from start, each run ending at
// the next edge of a loaded window of its path (LoadGuard outside it) or after one interval:
// what it measured under Fathom's own load arrives as runs of their own, which the server
// leaves out, and the rest as runs it keeps. The run learns its end from plan.RunEnd.
func (s *Scheduler) segments(ctx context.Context, t plan.Test, version string, start time.Time, interval time.Duration) {
	for {
		s.mu.Lock()
		windows, self := s.loaded, s.self
		s.mu.Unlock()
		if clear := SegmentStart(windows, self, t.Peer.ID, start); clear.After(start) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(clear)):
			}
			start = clear
		}
		end := SegmentEnd(windows, self, t.Peer.ID, start, interval)
		s.run(plan.WithRunEnd(ctx, end), t, version)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(end)):
		}
		start = end
		if now := time.Now(); now.After(start) {
			start = now // the run overran its end
		}
	}
}

// MinSegment is the shortest run SegmentEnd makes: a latency session needs its packet
// timeout and a few packets. An edge closer than this to the start is not cut at.
const MinSegment = 5 * time.Second

// SegmentStart is when a back-to-back run due at start begins: at the end of the loaded
// window it is in (LoadGuard after it) when that is under MinSegment away, since a piece
// that short could not be cut off and the run would carry the load on into a whole
// interval; else at start. (Its first run starts at random, anywhere.)
func SegmentStart(windows []plan.LoadedWindow, a, b string, start time.Time) time.Time {
	for _, span := range loadedSpans(windows, a, b) {
		if !start.Before(span[0]) && start.Before(span[1]) && span[1].Sub(start) < MinSegment {
			return span[1]
		}
	}
	return start
}

// SegmentEnd is when a back-to-back run from start ends: at the first edge of a window
// loading agent a or b (its start or end, LoadGuard outside it) that lies more than
// MinSegment ahead, if that comes before start+length (or at most MinSegment after it, so no
// stub run follows); else at start+length.
func SegmentEnd(windows []plan.LoadedWindow, a, b string, start time.Time, length time.Duration) time.Time {
	end := start.Add(length)
	var cut time.Time
	for _, span := range loadedSpans(windows, a, b) {
		for _, edge := range span {
			if edge.After(start.Add(MinSegment)) && !edge.After(end.Add(MinSegment)) && (cut.IsZero() || edge.Before(cut)) {
				cut = edge
			}
		}
	}
	if cut.IsZero() {
		return end
	}
	return cut
}

// loadedSpans are the windows loading a or b, widened by LoadGuard and merged where they
// meet: an edge inside another window is no way out of the load.
func loadedSpans(windows []plan.LoadedWindow, a, b string) [][2]time.Time {
	var spans [][2]time.Time
	for _, w := range windows {
		if w.Loads(a) || w.Loads(b) {
			spans = append(spans, [2]time.Time{w.StartAt.Add(-LoadGuard), w.EndAt.Add(LoadGuard)})
		}
	}
	slices.SortFunc(spans, func(x, y [2]time.Time) int { return x[0].Compare(y[0]) })
	merged := spans[:0]
	for _, span := range spans {
		if n := len(merged); n > 0 && !span[0].After(merged[n-1][1]) {
			if span[1].After(merged[n-1][1]) {
				merged[n-1][1] = span[1]
			}
			continue
		}
		merged = append(merged, span)
	}
	return merged
}

// startClear is when a run due at `at` starts: just after the loaded windows of its path it
// would overlap, if it then still ends before `before` (the test's next run); else at `at`.
func (s *Scheduler) startClear(t plan.Test, at, before time.Time) time.Time {
	s.mu.Lock()
	windows, self := s.loaded, s.self
	s.mu.Unlock()
	lasts := DefaultLasts
	if s.Lasts != nil {
		if d := s.Lasts(t); d > 0 {
			lasts = d
		}
	}
	start := ClearStart(windows, self, t.Peer.ID, at, lasts)
	if start.Add(lasts).After(before) {
		return at
	}
	return start
}

// ClearStart is the earliest time from at when a run lasting `lasts` between agents a and b
// overlaps no window that loads either of them, LoadGuard kept on both sides.
func ClearStart(windows []plan.LoadedWindow, a, b string, at time.Time, lasts time.Duration) time.Time {
	start := at
	for moved := true; moved; {
		moved = false
		for _, w := range windows {
			if !w.Loads(a) && !w.Loads(b) {
				continue
			}
			if start.Before(w.EndAt.Add(LoadGuard)) && start.Add(lasts).After(w.StartAt.Add(-LoadGuard)) {
				start, moved = w.EndAt.Add(LoadGuard), true
			}
		}
	}
	return start
}
