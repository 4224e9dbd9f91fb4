package hostclock

import (
	"errors"
	"testing"
	"time"
)

func TestTheLabsSharedClockIsExactAndAFailedReadUnknown(t *testing.T) {
	if state, err := For(true)(); err != nil || state != Shared || !state.Synchronized || state.MaxError != time.Microsecond {
		t.Fatalf("%+v %v", state, err)
	}
	broken := func() (State, error) { return State{Synchronized: true}, errors.New("no adjtimex") }
	if state, err := Current(broken); err == nil || state != Unknown || state.Synchronized {
		t.Fatalf("%+v %v", state, err)
	}
}
