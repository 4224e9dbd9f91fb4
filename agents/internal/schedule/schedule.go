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
