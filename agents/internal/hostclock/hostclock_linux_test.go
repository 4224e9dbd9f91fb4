package hostclock

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestTheKernelsStateReadsAsSynchronizedAndItsErrorBound(t *testing.T) {
	for _, c := range []struct {
		name          string
		state         int
		status, maxUs int64
		want          State
	}{
		{"chrony in sync", unix.TIME_OK, unix.STA_PLL, 1_250, State{true, 1250 * time.Microsecond}},
		{"leap second pending", unix.TIME_INS, 0, 80, State{true, 80 * time.Microsecond}},
		{"never synchronized", unix.TIME_ERROR, unix.STA_UNSYNC, 16_000_000, State{false, 16 * time.Second}},
		{"daemon gone", unix.TIME_OK, unix.STA_PLL | unix.STA_UNSYNC, 3_000_000, State{false, 3 * time.Second}},
		{"kernel says error", unix.TIME_ERROR, 0, 500, State{false, 500 * time.Microsecond}},
		{"negative bound", unix.TIME_OK, 0, -5, State{true, 0}},
	} {
		if got := fromKernel(c.state, c.status, c.maxUs); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// This host's kernel answers without privileges, whatever its clock's state.
func TestThisHostsClockCanBeRead(t *testing.T) {
	state, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if state.MaxError < 0 || state.MaxError > Unknown.MaxError {
		t.Fatalf("%+v", state)
	}
}
