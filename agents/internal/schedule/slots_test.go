package schedule

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
)

type slotRecorder struct {
	mu     sync.Mutex
	ran    map[string]int
	missed map[string]string
	at     map[string]time.Time
}

func newSlotRecorder() *slotRecorder {
	return &slotRecorder{ran: map[string]int{}, missed: map[string]string{}, at: map[string]time.Time{}}
}

func (r *slotRecorder) run(_ context.Context, slot plan.Slot, _ string, missed string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran[slot.ID]++
	r.at[slot.ID] = time.Now()
	if missed != "" {
		r.missed[slot.ID] = missed
	}
}

func (r *slotRecorder) snapshot() (map[string]int, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ran, missed := map[string]int{}, map[string]string{}
	for k, v := range r.ran {
		ran[k] = v
	}
	for k, v := range r.missed {
		missed[k] = v
	}
	return ran, missed
}

func slotAt(id string, start time.Time) plan.Slot {
	return plan.Slot{ID: id, TestID: "m/tput:" + id, Type: "throughput", StartAt: start, Spec: json.RawMessage(`{}`)}
}

func TestSlotsRunOnceAtTheirStartAndLateOnesAreMissed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newSlotRecorder()
	ledger := filepath.Join(t.TempDir(), "slots.json")
	s := NewSlots(ctx, rec.run, ledger)
	now := time.Now()
	p := &plan.Plan{Version: "v1", Slots: []plan.Slot{
		slotAt("soon", now.Add(150*time.Millisecond)),
		slotAt("slept-through", now.Add(-10*time.Minute)),
		slotAt("just-late", now.Add(-3*time.Second)), // within LateStart: still runs
		slotAt("later", now.Add(time.Hour)),
	}}
	s.Apply(p)
	s.Apply(p) // a refreshed plan listing the same slots changes nothing
	waitFor(t, func() bool {
		ran, _ := rec.snapshot()
		return ran["soon"] > 0 && ran["just-late"] > 0 && ran["slept-through"] > 0
	})
	ran, missed := rec.snapshot()
	if ran["soon"] != 1 || ran["just-late"] != 1 || ran["slept-through"] != 1 || ran["later"] != 0 {
		t.Fatalf("runs %v", ran)
	}
	if missed["slept-through"] == "" || missed["soon"] != "" || missed["just-late"] != "" {
		t.Fatalf("missed %v", missed)
	}
	if start := rec.at["soon"]; start.Before(now.Add(150 * time.Millisecond)) {
		t.Fatalf("slot ran early: %v before %v", start, now.Add(150*time.Millisecond))
	}
	s.Apply(p)
	time.Sleep(50 * time.Millisecond)
	if ran, _ := rec.snapshot(); ran["soon"] != 1 {
		t.Fatalf("a handled slot ran again: %v", ran)
	}
	// A restarted agent reads the ledger and does not repeat what it handled.
	s.Stop()
	again := newSlotRecorder()
	restarted := NewSlots(ctx, again.run, ledger)
	restarted.Apply(p)
	time.Sleep(50 * time.Millisecond)
	if ran, _ := again.snapshot(); len(ran) != 0 {
		t.Fatalf("restart repeated slots: %v", ran)
	}
	restarted.Stop()
	restarted.Wait()
}

func TestSlotsDroppedFromThePlanAreDisarmed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newSlotRecorder()
	s := NewSlots(ctx, rec.run, "")
	// Seconds out, so the second plan surely comes before the first one's slot is due,
	// however slowly a loaded machine gets from one Apply to the next.
	start := time.Now().Add(2 * time.Second)
	s.Apply(&plan.Plan{Version: "v1", Slots: []plan.Slot{slotAt("moved", start)}})
	s.Apply(&plan.Plan{Version: "v2", Slots: []plan.Slot{slotAt("new", start)}})
	waitFor(t, func() bool { ran, _ := rec.snapshot(); return ran["new"] > 0 })
	time.Sleep(200 * time.Millisecond) // "moved" was due at the same time
	s.Stop()
	s.Wait()
	if ran, _ := rec.snapshot(); ran["moved"] != 0 || ran["new"] != 1 {
		t.Fatalf("runs %v", ran)
	}
}

func TestStopDisarmsEverything(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newSlotRecorder()
	s := NewSlots(ctx, rec.run, "")
	// Seconds out, so Stop surely comes before the slot is due.
	start := time.Now().Add(2 * time.Second)
	s.Apply(&plan.Plan{Version: "v1", Slots: []plan.Slot{slotAt("a", start)}})
	s.Stop()
	s.Wait()
	time.Sleep(time.Until(start.Add(200 * time.Millisecond))) // past the slot's start
	if ran, _ := rec.snapshot(); len(ran) != 0 {
		t.Fatalf("runs after stop %v", ran)
	}
}

// A slot armed from one plan runs with what the newest plan says of it: the peer's iperf3
// credential may arrive after the slot was first listed.
func TestAnArmedSlotRunsWithTheNewestPlansWord(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got plan.Slot
	var gotVersion string
	s := NewSlots(ctx, func(_ context.Context, slot plan.Slot, version, _ string) {
		mu.Lock()
		defer mu.Unlock()
		got, gotVersion = slot, version
	}, "")
	// Seconds out, so the second plan surely comes before the slot is due.
	first := slotAt("s", time.Now().Add(2*time.Second))
	s.Apply(&plan.Plan{Version: "v1", Slots: []plan.Slot{first}})
	withAuth := first
	withAuth.Iperf3Auth = &plan.Iperf3Auth{Username: "slot-s", Password: "pw", PublicKey: "KEY"}
	s.Apply(&plan.Plan{Version: "v2", Slots: []plan.Slot{withAuth}})
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return gotVersion != "" })
	s.Stop()
	s.Wait()
	mu.Lock()
	defer mu.Unlock()
	if got.Iperf3Auth == nil || got.Iperf3Auth.Username != "slot-s" || gotVersion != "v2" {
		t.Fatalf("ran %+v from plan %q", got, gotVersion)
	}
}
