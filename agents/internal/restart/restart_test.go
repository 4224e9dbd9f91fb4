package restart

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFailuresArePausedDoublingUpToTheMostAndCtxEndsTheLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pauses []time.Duration
	calls := 0
	Loop(ctx, time.Millisecond, 4*time.Millisecond, func(context.Context) error {
		calls++
		return errors.New("port taken")
	}, func(err error, retryIn time.Duration) {
		if err == nil || err.Error() != "port taken" {
			t.Errorf("failed with %v", err)
		}
		pauses = append(pauses, retryIn)
		if len(pauses) == 5 {
			cancel()
		}
	})
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	if calls != 5 || len(pauses) != len(want) {
		t.Fatalf("%d calls, pauses %v", calls, pauses)
	}
	for i := range want {
		if pauses[i] != want[i] {
			t.Fatalf("pauses %v, want %v", pauses, want)
		}
	}
}

func TestAServeThatEndsWithItsContextIsNotAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	Loop(ctx, time.Millisecond, time.Millisecond, func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}, func(err error, _ time.Duration) { t.Errorf("reported %v", err) })
}
