package schedule

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
)

// SlotFunc runs one planned slot; missed is non-empty when the slot can no longer start on
// time and must be reported as missed with that reason instead.
type SlotFunc func(ctx context.Context, slot plan.Slot, planVersion, missed string)

// Slots runs the server's exclusive slots at their start times. Each slot is handled once,
// whatever number of plans list it: a ledger on disk remembers the handled ones, so a restart
// neither runs a slot twice nor forgets to report the ones it slept through.
type Slots struct {
	run SlotFunc
	// LateStart is how late a slot may still start (clocks differ a little); later it is
	// missed. It stays below the server's margin around each reservation (8 s), so a late
	// start never runs into the next agent's slot.
	LateStart time.Duration
	Now       func() time.Time
	ledger    string
	ctx       context.Context
	mu        sync.Mutex
	handled   map[string]time.Time // slot id -> start, pruned after a while
	timers    map[string]*time.Timer
	// armed is the newest plan's word on each armed slot: a later plan may bring the
	// peer's iperf3 credential (or new options) for a slot already waiting to start.
	armed map[string]armedSlot
	wg    sync.WaitGroup
}

type armedSlot struct {
	slot    plan.Slot
	version string
}

// ledgerKeep is how long a handled slot id is remembered: longer than any plan lists it.
const ledgerKeep = 48 * time.Hour

// NewSlots returns a slot runner whose ledger lives at ledgerPath (empty: memory only).
func NewSlots(ctx context.Context, run SlotFunc, ledgerPath string) *Slots {
	s := &Slots{run: run, LateStart: 5 * time.Second, Now: time.Now, ledger: ledgerPath, ctx: ctx,
		handled: map[string]time.Time{}, timers: map[string]*time.Timer{}, armed: map[string]armedSlot{}}
	if ledgerPath != "" {
		if data, err := os.ReadFile(ledgerPath); err == nil {
			_ = json.Unmarshal(data, &s.handled) // a damaged ledger only risks a repeated run
		}
	}
	return s
}

// Apply arms a timer for every slot of the plan not yet handled and disarms slots the plan
// no longer lists (the server moved or dropped them). Slots whose start passed more than
// LateStart ago are reported missed at once.
func (s *Slots) Apply(p *plan.Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wanted := map[string]plan.Slot{}
	version := ""
	if p != nil {
		version = p.Version
		for _, slot := range p.Slots {
			wanted[slot.ID] = slot
		}
	}
	for id, timer := range s.timers {
		if _, ok := wanted[id]; !ok && timer.Stop() {
			delete(s.timers, id)
			delete(s.armed, id)
			s.wg.Done()
		}
	}
	now := s.Now()
	for id, slot := range wanted {
		if _, done := s.handled[id]; done {
			continue
		}
		if _, armed := s.timers[id]; armed {
			s.armed[id] = armedSlot{slot, version}
			continue
		}
		late := now.Sub(slot.StartAt)
		if late > s.LateStart {
			s.markLocked(slot)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				reason := fmt.Sprintf("the agent was not running at the slot's start (%s late)", late.Round(time.Second))
				s.run(s.ctx, slot, version, reason)
			}()
			continue
		}
		s.wg.Add(1)
		s.armed[id] = armedSlot{slot, version}
		s.timers[id] = time.AfterFunc(max(0, -late), func() { s.fire(id) })
	}
}

func (s *Slots) fire(id string) {
	defer s.wg.Done()
	s.mu.Lock()
	if _, armed := s.timers[id]; !armed {
		s.mu.Unlock()
		return
	}
	newest := s.armed[id]
	slot, version := newest.slot, newest.version
	delete(s.timers, id)
	delete(s.armed, id)
	s.markLocked(slot)
	s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	missed := ""
	if late := s.Now().Sub(slot.StartAt); late > s.LateStart {
		missed = fmt.Sprintf("the agent could not start the slot on time (%s late)", late.Round(time.Second))
	}
	s.run(s.ctx, slot, version, missed)
}

// markLocked records a slot as handled and saves the ledger; s.mu is held.
func (s *Slots) markLocked(slot plan.Slot) {
	now := s.Now()
	s.handled[slot.ID] = slot.StartAt
	for id, start := range s.handled {
		if now.Sub(start) > ledgerKeep {
			delete(s.handled, id)
		}
	}
	if s.ledger != "" {
		// A ledger not written only risks repeating a run after a restart.
		_ = writeAtomic(s.ledger, s.handled)
	}
}

// Stop disarms every timer; Wait then returns once running slots have finished.
func (s *Slots) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, timer := range s.timers {
		if timer.Stop() {
			s.wg.Done()
		}
		delete(s.timers, id)
		delete(s.armed, id)
	}
}

// Wait blocks until every started slot has finished.
func (s *Slots) Wait() { s.wg.Wait() }

func writeAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".slots-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
