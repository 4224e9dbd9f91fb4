// Package hostclock reads how well this host's clock keeps time, as the kernel's NTP state
// has it: whether a daemon (chrony, ntpd, systemd-timesyncd) keeps it synchronized, and the
// error bound that daemon maintains. TWAMP-light packets declare it (RFC 4656's Error
// Estimate) and latency results report it: a one-way delay is right only as far as the
// clocks of its two ends agree.
package hostclock

import "time"

// State is a clock's synchronization as the kernel keeps it.
type State struct {
	Synchronized bool
	// MaxError bounds the clock's offset from true time (the kernel's maxerror, which the
	// daemon sets and the kernel grows by 500 ppm between its updates).
	MaxError time.Duration
}

// Unknown is a clock whose state could not be read: not synchronized, with the largest
// error the kernel itself ever declares (its maxerror stops growing at 16 s).
var Unknown = State{MaxError: 16 * time.Second}

// Shared is the lab's clock: its hosts are network namespaces of one kernel, so both ends
// of a path read one clock and agree to the nanosecond, whatever NTP says about it. Only a
// lab may claim it (twamp.clock_shared): on real hosts it would pass off one-way delays
// between unsynchronized clocks as exact.
var Shared = State{Synchronized: true, MaxError: time.Microsecond}

// Reader reads a clock's state.
type Reader func() (State, error)

// For is the reader of this host's clock: the kernel's, or Shared where the lab's hosts
// share one clock.
func For(shared bool) Reader {
	if shared {
		return func() (State, error) { return Shared, nil }
	}
	return Read
}

// Current is what reader says, or Unknown with the reason when it cannot say.
func Current(reader Reader) (State, error) {
	state, err := reader()
	if err != nil {
		return Unknown, err
	}
	return state, nil
}
