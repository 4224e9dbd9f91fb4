package hostclock

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Read is the kernel's NTP state: adjtimex with no modes set only reads, and needs no
// privilege.
func Read() (State, error) {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return Unknown, fmt.Errorf("adjtimex: %w", err)
	}
	return fromKernel(state, int64(tx.Status), int64(tx.Maxerror)), nil
}

// fromKernel reads adjtimex's answer: the clock is synchronized unless the daemon has not
// set it or let it lapse (STA_UNSYNC) or the kernel says so (TIME_ERROR); maxerror is in µs.
func fromKernel(state int, status, maxErrorUs int64) State {
	return State{
		Synchronized: status&unix.STA_UNSYNC == 0 && state != unix.TIME_ERROR,
		MaxError:     time.Duration(max(maxErrorUs, 0)) * time.Microsecond,
	}
}
