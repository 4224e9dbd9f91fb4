package throughput

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// A policer's UDP ramp offers rising rates, one iperf3 UDP run per rate, back to back in
// one slot: below the policer's rate a step loses nothing, above it the receiver gets the
// policer's rate and the rest is lost. The steps become one measurement whose ramp lists
// each step, so analysis reads the rate where loss begins without joining runs.

// rampRun is one finished step: the rate offered and iperf3's account of it.
type rampRun struct {
	offeredBps int64
	outcome    result.Throughput
}

// ramp runs spec's steps in order; the caller holds the busy guard for all of them. A step
// that fails ends the ramp with an error naming it, and the steps finished before it are
// kept (a failed result may carry its section). A cancelled ctx stops the running step.
func (p *Prober) ramp(ctx context.Context, spec Spec, address string, auth *plan.Iperf3Auth) (result.Throughput, error) {
	steps := make([]rampRun, 0, len(spec.RampBps))
	for i, rate := range spec.RampBps {
		outcome, err := p.once(ctx, spec.step(rate), address, auth)
		for _, pause := range reopenPauses {
			if i == 0 || !stillClosing(err, outcome) || ctx.Err() != nil {
				break
			}
			// iperf3's server ends a test after its client has gone: it closes its listening
			// socket and opens it again, and until it has reset the test it answers a new
			// client "busy". A step that came back faster than that was refused, turned away,
			// or reset with the old socket's backlog (accepted by the kernel, never by
			// iperf3) by the server's end of our own previous step; connecting again a
			// moment later costs milliseconds of the slot, not a failed ramp.
			select {
			case <-ctx.Done():
			case <-time.After(pause):
				outcome, err = p.once(ctx, spec.step(rate), address, auth)
			}
		}
		if err != nil {
			return combineRamp(spec, steps), fmt.Errorf("ramp step %d of %d (%s): %w", i+1, len(spec.RampBps), mbits(rate), err)
		}
		steps = append(steps, rampRun{offeredBps: rate, outcome: outcome})
	}
	return combineRamp(spec, steps), nil
}

// reopenPauses are the waits before connecting again to a server that refused or turned
// away a step after the first: it was still ending the previous step's test.
var reopenPauses = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second}

// stillClosing is whether err is what a server still ending the previous test answers:
// a refused connection (its listening socket closed), "busy" (the test not yet reset), or
// a connection reset before the test began (the closed socket's backlog: CI of
// 2026-12-04, "ramp step 4 of 5: unable to receive control message: Connection reset by
// peer", twice on a 310 ms path). A reset after intervals were measured is a server that
// died mid-test, not one still closing. The first step is never retried: there is no
// previous test of ours to end.
func stillClosing(err error, outcome result.Throughput) bool {
	var runErr *RunError
	if !errors.As(err, &runErr) {
		return false
	}
	return runErr.Class == "refused" || runErr.Class == "busy" || (runErr.Class == "peer gone" && len(outcome.Intervals) == 0)
}

// step is one ramp step's spec: a UDP run at rate, finely paced and omitting nothing, with
// every other option kept.
func (s Spec) step(rate int64) Spec {
	s.BitrateBps, s.RampBps, s.rampStep = rate, nil, true
	return s
}

// combineRamp makes the finished steps one measurement. Each iperf3 run restarts its clock
// at 0, and again after its omitted seconds; the steps' intervals are shifted onto one time
// line on which a step starts where the previous one ended as the backend reckons interval
// times (a measured interval ends omit_s after its end_s): by the omitted and measured
// seconds of the steps before. With no steps there is nothing.
func combineRamp(spec Spec, steps []rampRun) result.Throughput {
	if len(steps) == 0 {
		return result.Throughput{}
	}
	first := steps[0].outcome
	out := result.Throughput{
		Options: spec.Options(), Iperf3Version: first.Iperf3Version, Protocol: "UDP", Reverse: spec.Reverse,
		Streams: 1, OmitS: first.OmitS, SndbufActual: first.SndbufActual, RcvbufActual: first.RcvbufActual,
		Intervals: []result.ThroughputInterval{},
	}
	offset, measured := 0.0, 0.0
	for _, step := range steps {
		for _, iv := range step.outcome.Intervals {
			iv.StartS, iv.EndS = iv.StartS+offset, iv.EndS+offset
			out.Intervals = append(out.Intervals, iv)
		}
		seconds := measuredSeconds(step.outcome.Intervals)
		out.Ramp = append(out.Ramp, rampStep(step.offeredBps, offset, seconds, step.outcome.Summary))
		out.DurationS += step.outcome.DurationS
		measured += seconds
		offset += float64(step.outcome.OmitS) + seconds
	}
	out.Summary = rampSummary(steps, measured)
	out.StreamSummaries = []result.ThroughputSummary{out.Summary}
	return out
}

// measuredSeconds is how long a run measured: iperf3's clock restarts at 0 after the
// omitted seconds, so it is the end of its last measured interval.
func measuredSeconds(intervals []result.ThroughputInterval) float64 {
	seconds := 0.0
	for _, iv := range intervals {
		if !iv.Omitted {
			seconds = max(seconds, iv.EndS)
		}
	}
	return seconds
}

// rampStep is one step's entry from its own run's summary (for UDP, Parse reads the
// receiver's loss and delivered rate in either direction).
func rampStep(offeredBps int64, startedS, seconds float64, s result.ThroughputSummary) result.RampStep {
	packets, lost := orZero(s.Packets), orZero(s.LostPackets)
	percent := lossPercent(packets, lost)
	if s.LostPercent != nil {
		percent = min(100, max(0, *s.LostPercent))
	}
	return result.RampStep{
		OfferedBps: offeredBps, StartedS: startedS, DurationS: seconds,
		SenderBitsPerS: s.SenderBitsPerS, ReceiverBitsPerS: s.ReceiverBitsPerS,
		Packets: packets, LostPackets: lost, LostPercent: percent, JitterMs: s.JitterMs,
	}
}

// rampSummary totals the steps: bytes, packets and losses add up, rates are over all the
// measured seconds. Jitter does not add up; the last, fastest step's is where a policer's
// queue shows. UDP has no retransmits, RTT or windows.
func rampSummary(steps []rampRun, seconds float64) result.ThroughputSummary {
	var sum result.ThroughputSummary
	var packets, lost int64
	for _, step := range steps {
		s := step.outcome.Summary
		sum.SenderBytes += s.SenderBytes
		sum.ReceiverBytes += s.ReceiverBytes
		packets += orZero(s.Packets)
		lost += orZero(s.LostPackets)
		sum.HostCPUPercent = maxFloat(sum.HostCPUPercent, s.HostCPUPercent)
		sum.RemoteCPUPercent = maxFloat(sum.RemoteCPUPercent, s.RemoteCPUPercent)
	}
	if seconds > 0 {
		sum.SenderBitsPerS = float64(sum.SenderBytes) * 8 / seconds
		sum.ReceiverBitsPerS = float64(sum.ReceiverBytes) * 8 / seconds
	}
	percent := lossPercent(packets, lost)
	sum.Packets, sum.LostPackets, sum.LostPercent = &packets, &lost, &percent
	sum.JitterMs = steps[len(steps)-1].outcome.Summary.JitterMs
	return sum
}

func lossPercent(packets, lost int64) float64 {
	if packets <= 0 {
		return 0
	}
	return min(100, max(0, float64(lost)/float64(packets)*100))
}

func orZero(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

func maxFloat(a, b *float64) *float64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

// mbits names a rate as a NOC reads it in an error: "120 Mbit/s".
func mbits(bps int64) string {
	return strconv.FormatFloat(float64(bps)/1e6, 'f', -1, 64) + " Mbit/s"
}
