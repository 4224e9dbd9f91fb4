package latency

import (
	"math"
	"slices"
	"time"

	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// Summarize is the result section of one interval's session: its counts, each direction's
// loss, reordering, delays, delay variation and hops, the round trip, and both clocks as
// their packets declared them (sender is what this host's packets said).
//
// The losses come from the reflector's numbering (twamp.Losses): answers missing below
// the highest number the reflector gave were lost on the way back, the rest on the way
// there, so sent = answered + forward.lost + backward.lost always.
func Summarize(spec Spec, out twamp.Outcome, sender twamp.ErrorEstimate) *result.Latency {
	replies := out.Replies
	forwardLost, backwardLost := twamp.Losses(out.Sent, replies)
	l := &result.Latency{
		PacketIntervalS: spec.PacketIntervalS, SizeBytes: spec.SizeBytes, DSCP: spec.DSCP, Port: spec.Port,
		Sent: out.Sent, Answered: len(replies), Duplicates: out.Duplicates, Malformed: out.Malformed,
		SenderClock: clockOf(sender),
	}

	// The reflector numbers its answers in the order packets reached it: that order is the
	// forward direction's arrival order, and the numbers are what the backward one carries.
	byReflector := slices.Clone(replies)
	slices.SortStableFunc(byReflector, func(a, b twamp.Reply) int { return cmpSeq(a.ReflectorSeq, b.ReflectorSeq) })
	bySender := slices.Clone(replies)
	slices.SortFunc(bySender, func(a, b twamp.Reply) int { return cmpSeq(a.Seq, b.Seq) })

	l.Forward = result.LatencyDirection{
		Lost:              forwardLost,
		ReorderedFraction: reordered(byReflector, senderSeq),
		Delay:             delays(replies, twamp.Reply.Forward),
		IPDVMs:            ipdv(bySender, senderSeq, twamp.Reply.Forward),
		Hops:              hops(replies, func(r twamp.Reply) uint8 { return r.SenderTTL }),
	}
	l.Backward = result.LatencyDirection{
		Lost:              backwardLost,
		ReorderedFraction: reordered(replies, reflectorSeq), // in the order they came back
		Delay:             delays(replies, twamp.Reply.Backward),
		IPDVMs:            ipdv(byReflector, reflectorSeq, twamp.Reply.Backward),
		Hops:              hops(replies, func(r twamp.Reply) uint8 { return r.ReplyTTL }),
	}
	l.RoundTrip = delays(replies, twamp.Reply.RoundTrip)
	if len(replies) > 0 {
		// The reflector's clock at its worst over the interval: synchronized only if every
		// answer said so, the largest error any declared.
		worst := result.LatencyClock{Synchronized: true}
		for _, r := range replies {
			c := clockOf(r.ReflectorErr)
			worst.Synchronized = worst.Synchronized && c.Synchronized
			worst.ErrorMs = max(worst.ErrorMs, c.ErrorMs)
		}
		l.ReflectorClock = &worst
	}
	return l
}

func senderSeq(r twamp.Reply) uint32    { return r.Seq }
func reflectorSeq(r twamp.Reply) uint32 { return r.ReflectorSeq }

func cmpSeq(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxDelayMs bounds the delays the contract holds: beyond it, the two clocks are too far
// apart for a one-way delay to say anything.
const maxDelayMs = 600_000

// delays are the minimum, nearest-rank percentiles (the smallest delay that at least p% of
// the packets do not exceed: always one that was measured) and maximum, in ms to the µs.
// All are nil when no packet arrived or when they lie beyond ±maxDelayMs.
func delays(replies []twamp.Reply, delay func(twamp.Reply) time.Duration) result.LatencyDelays {
	if len(replies) == 0 {
		return result.LatencyDelays{}
	}
	sorted := make([]time.Duration, len(replies))
	for i, r := range replies {
		sorted[i] = delay(r)
	}
	slices.Sort(sorted)
	lowest, highest := ms(sorted[0]), ms(sorted[len(sorted)-1])
	if lowest < -maxDelayMs || highest > maxDelayMs {
		return result.LatencyDelays{}
	}
	rank := func(p float64) *float64 {
		v := ms(sorted[int(math.Ceil(p/100*float64(len(sorted))))-1])
		return &v
	}
	return result.LatencyDelays{MinMs: &lowest, P50Ms: rank(50), P90Ms: rank(90), P99Ms: rank(99), MaxMs: &highest}
}

// reordered is RFC 4737's reordered ratio of packets in their arrival order: the share
// that arrived with a sequence number below one that arrived before them. Nil when none
// arrived.
func reordered(arrived []twamp.Reply, seq func(twamp.Reply) uint32) *float64 {
	if len(arrived) == 0 {
		return nil
	}
	late, highest := 0, seq(arrived[0])
	for _, r := range arrived[1:] {
		if seq(r) < highest {
			late++
		}
		highest = max(highest, seq(r))
	}
	fraction := float64(late) / float64(len(arrived))
	return &fraction
}

// ipdv is RFC 3393's delay variation as the mean absolute difference between the delays of
// consecutive packets, packets numbered n and n+1 in the direction's own stream (the
// sender's numbers forward, the reflector's back) that both arrived, in ms to the µs; nil
// when no such pair did. sorted is in the order of those numbers.
func ipdv(sorted []twamp.Reply, seq func(twamp.Reply) uint32, delay func(twamp.Reply) time.Duration) *float64 {
	var sum time.Duration
	pairs := 0
	for i := 1; i < len(sorted); i++ {
		if seq(sorted[i]) == seq(sorted[i-1])+1 {
			sum += (delay(sorted[i]) - delay(sorted[i-1])).Abs()
			pairs++
		}
	}
	if pairs == 0 {
		return nil
	}
	v := ms(sum / time.Duration(pairs))
	if v > maxDelayMs {
		return nil
	}
	return &v
}

// hops is 255 minus the TTL most packets arrived with (both ends send with 255; on a tie
// the fewer hops), nil when no packet's TTL could be read (0).
func hops(replies []twamp.Reply, ttl func(twamp.Reply) uint8) *int {
	var counts [256]int
	for _, r := range replies {
		counts[ttl(r)]++
	}
	best, most := 0, 0
	for t := 255; t > 0; t-- { // from the fewest hops, which a tie keeps
		if counts[t] > most {
			best, most = t, counts[t]
		}
	}
	if best == 0 {
		return nil
	}
	h := 255 - best
	return &h
}

// maxErrorMs is the largest error the contract holds, some 30 years.
const maxErrorMs = 1e12

// clockOf is a clock as an error estimate declares it; an estimate RFC 4656 does not allow
// (multiplier 0, or other than NTP timestamps) says nothing, and reads as UnknownClock.
func clockOf(e twamp.ErrorEstimate) result.LatencyClock {
	if !e.Valid() {
		e = twamp.UnknownClock
	}
	errorMs := math.Round(float64(e.Error())) / 1e6 // ns resolution
	return result.LatencyClock{Synchronized: e.Synced(), ErrorMs: min(errorMs, maxErrorMs)}
}

// ms is a duration in milliseconds, rounded to the µs.
func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)) / 1000 }
