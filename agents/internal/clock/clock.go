// Package clock is the agent's time for waiting: the intervals, timers and back-offs between
// its actions (plan polls, host-facts reports, scheduled tests, upload rounds and retries).
// Absolute times stay on the wall clock, because the server judges them: result
// timestamps, a plan's valid_until, throughput slots at their planned starts, and how long a
// probe itself runs.
//
// A production build always waits in real time. A test build (go build -tags
// fathomtestclock, `make agents-testclock`) reads RateEnv, so a system test can give a real
// agent an hour-long outage in a minute.
package clock

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// RateEnv is how many times faster than real time a test build's waits pass.
const RateEnv = "FATHOM_AGENT_TEST_CLOCK_RATE"

// MaxRate bounds a test build's rate: beyond it waits shrink below the timers' resolution.
const MaxRate = 3600

// Clock turns the agent's durations into real waits. The zero value is Real.
type Clock struct {
	rate float64
}

// Real waits in real time.
var Real = Clock{}

// Scaled returns a clock whose waits pass rate times faster than real time (rate >= 1).
func Scaled(rate float64) Clock {
	if !(rate >= 1) { // also NaN
		return Real
	}
	return Clock{rate: rate}
}

// Rate is how many times faster than real time the clock's waits pass (1 for Real).
func (c Clock) Rate() float64 {
	if c.rate == 0 {
		return 1
	}
	return c.rate
}

// Scale is the real time that d of the agent's time lasts.
func (c Clock) Scale(d time.Duration) time.Duration {
	if c.rate <= 1 {
		return d
	}
	return time.Duration(float64(d) / c.rate)
}

// After is time.After for d of the agent's time.
func (c Clock) After(d time.Duration) <-chan time.Time { return time.After(c.Scale(d)) }

// NewTimer is time.NewTimer for d of the agent's time.
func (c Clock) NewTimer(d time.Duration) *time.Timer { return time.NewTimer(c.Scale(d)) }

// fromRate is the clock a test build runs on for RateEnv's value; empty means real time.
func fromRate(value string) (Clock, error) {
	if value == "" {
		return Real, nil
	}
	rate, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(rate) || rate < 1 || rate > MaxRate {
		return Real, fmt.Errorf("%s: %q is not a rate from 1 to %d", RateEnv, value, MaxRate)
	}
	return Scaled(rate), nil
}
