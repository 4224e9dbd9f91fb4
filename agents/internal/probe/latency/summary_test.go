package latency

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/result"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const msec = time.Millisecond

// reply is packet seq, numbered reflected by the reflector, with its one-way delays as the
// two clocks show them and 1 ms spent in the reflector.
func reply(seq, reflected uint32, forward, backward time.Duration, senderTTL, replyTTL uint8, clock twamp.ErrorEstimate) twamp.Reply {
	sent := t0.Add(time.Duration(seq) * 100 * msec)
	return twamp.Reply{
		Seq: seq, ReflectorSeq: reflected, Sent: sent, Reflected: sent.Add(forward), Answered: sent.Add(forward + msec),
		Received: sent.Add(forward + msec + backward), ReflectorErr: clock, SenderTTL: senderTTL, ReplyTTL: replyTTL,
	}
}

func delaysOf(values ...float64) result.LatencyDelays {
	p := make([]*float64, len(values))
	for i := range values {
		p[i] = &values[i]
	}
	return result.LatencyDelays{MinMs: p[0], P50Ms: p[1], P90Ms: p[2], P99Ms: p[3], MaxMs: p[4]}
}

func sameDelays(t *testing.T, what string, got, want result.LatencyDelays) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s: %s, want %s", what, g, w)
	}
}

func near(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

// Ten packets: 6 and 9 never reached the reflector, which numbered the other eight in the
// order they came (3 overtook 2); the answer to 5 (number 5) was lost coming back, and
// answer 4 overtook answer 3 on the way.
func TestAnIntervalsSectionFromItsReplies(t *testing.T) {
	ms1, ms2 := twamp.NewErrorEstimate(true, msec), twamp.NewErrorEstimate(true, 2*msec)
	arrived := []twamp.Reply{ // in the order the answers came back
		reply(0, 0, 10*msec, 5*msec, 252, 250, ms1),
		reply(1, 1, 11*msec, 5*msec, 252, 250, ms1),
		reply(3, 2, 10*msec, 6*msec, 252, 249, ms1),
		reply(4, 4, 14*msec, 7*msec, 0, 249, ms2), // a TTL the reflector could not read
		reply(2, 3, 12*msec, 5*msec, 252, 250, ms1),
		reply(7, 6, 10*msec, 5*msec, 251, 249, ms1),
		reply(8, 7, 13*msec, 8*msec, 252, 250, ms1),
	}
	spec := DefaultSpec()
	sender := twamp.NewErrorEstimate(false, 12500*time.Microsecond)
	l := Summarize(spec, twamp.Outcome{Sent: 10, Replies: arrived, Duplicates: 1, Malformed: 2}, sender)

	if l.Sent != 10 || l.Answered != 7 || l.Duplicates != 1 || l.Malformed != 2 || l.Port != 862 || l.SizeBytes != 41 || l.PacketIntervalS != 0.1 {
		t.Fatalf("counts %+v", l)
	}
	// The reflector's highest number, 7, says 8 packets reached it: 2 lost going, 1 coming.
	if l.Forward.Lost != 2 || l.Backward.Lost != 1 || l.Sent != l.Answered+l.Forward.Lost+l.Backward.Lost {
		t.Errorf("lost %d forward, %d backward", l.Forward.Lost, l.Backward.Lost)
	}
	// Forward, in the reflector's order, 2 came after 3; back, answer 3 after answer 4.
	if !near(l.Forward.ReorderedFraction, 1.0/7) || !near(l.Backward.ReorderedFraction, 1.0/7) {
		t.Errorf("reordered %v %v", *l.Forward.ReorderedFraction, *l.Backward.ReorderedFraction)
	}
	// Nearest rank over 7: p50 is the 4th, p90 and p99 the 7th.
	sameDelays(t, "forward", l.Forward.Delay, delaysOf(10, 11, 14, 14, 14))
	sameDelays(t, "backward", l.Backward.Delay, delaysOf(5, 5, 8, 8, 8))
	sameDelays(t, "round trip", l.RoundTrip, delaysOf(15, 16, 21, 21, 21)) // the reflector's 1 ms out
	// Consecutive numbers only: forward 0-1, 1-2, 2-3, 3-4, 7-8 (1+1+2+4+3 = 11 over 5),
	// back 0-1, 1-2, 2-3, 3-4, 6-7 (0+1+1+2+3 = 7 over 5).
	if !near(l.Forward.IPDVMs, 2.2) || !near(l.Backward.IPDVMs, 1.4) {
		t.Errorf("ipdv %v %v", *l.Forward.IPDVMs, *l.Backward.IPDVMs)
	}
	// Most packets arrived with 252 (3 hops) and 250 (5 hops); the unread TTL counts not.
	if l.Forward.Hops == nil || *l.Forward.Hops != 3 || l.Backward.Hops == nil || *l.Backward.Hops != 5 {
		t.Errorf("hops %v %v", l.Forward.Hops, l.Backward.Hops)
	}
	// Each clock as its packets declared it (an estimate rounds up, by under 1%): the
	// reflector's at its worst.
	if l.SenderClock.Synchronized || l.SenderClock.ErrorMs < 12.5 || l.SenderClock.ErrorMs > 12.6 {
		t.Errorf("sender clock %+v", l.SenderClock)
	}
	if c := l.ReflectorClock; c == nil || !c.Synchronized || c.ErrorMs < 2 || c.ErrorMs > 2.02 {
		t.Errorf("reflector clock %+v", c)
	}
}

func TestAnIntervalWithoutAnswersLostEverythingOnTheWayThere(t *testing.T) {
	l := Summarize(DefaultSpec(), twamp.Outcome{Sent: 580, Malformed: 2}, twamp.NewErrorEstimate(true, msec))
	if l.Answered != 0 || l.Forward.Lost != 580 || l.Backward.Lost != 0 || l.ReflectorClock != nil {
		t.Fatalf("%+v", l)
	}
	for _, d := range []result.LatencyDirection{l.Forward, l.Backward} {
		if d.ReorderedFraction != nil || d.IPDVMs != nil || d.Hops != nil || d.Delay != (result.LatencyDelays{}) {
			t.Errorf("%+v", d)
		}
	}
	if l.RoundTrip != (result.LatencyDelays{}) {
		t.Errorf("%+v", l.RoundTrip)
	}
}

func TestLossesAddUpToWhatWasSentWhateverTheReflectorNumbers(t *testing.T) {
	ms1 := twamp.NewErrorEstimate(true, msec)
	// A reflector that restarted mid-interval numbers 0, 1, 2 and then 0, 1 again.
	var replies []twamp.Reply
	for i, n := range []uint32{0, 1, 2, 0, 1} {
		replies = append(replies, reply(uint32(i), n, 10*msec, 10*msec, 255, 255, ms1))
	}
	l := Summarize(DefaultSpec(), twamp.Outcome{Sent: 8, Replies: replies}, ms1)
	if l.Answered != 5 || l.Forward.Lost != 3 || l.Backward.Lost != 0 {
		t.Fatalf("answered %d, lost %d and %d", l.Answered, l.Forward.Lost, l.Backward.Lost)
	}
	// Loopback: no hop either way.
	if *l.Forward.Hops != 0 || *l.Backward.Hops != 0 {
		t.Fatalf("hops %d %d", *l.Forward.Hops, *l.Backward.Hops)
	}
}

// Clocks 20 minutes apart put one-way delays beyond what the contract holds: they say
// nothing, and are left out; the round trip, one clock's difference each, stays.
func TestOneWayDelaysBetweenClocksFarApartAreLeftOut(t *testing.T) {
	skew := 20 * time.Minute
	ms1 := twamp.NewErrorEstimate(false, time.Hour)
	replies := []twamp.Reply{reply(0, 0, skew+10*msec, 10*msec-skew, 255, 255, ms1), reply(1, 1, skew+12*msec, 11*msec-skew, 255, 255, ms1)}
	l := Summarize(DefaultSpec(), twamp.Outcome{Sent: 2, Replies: replies}, ms1)
	if l.Forward.Delay != (result.LatencyDelays{}) || l.Backward.Delay != (result.LatencyDelays{}) {
		t.Fatalf("%+v %+v", l.Forward.Delay, l.Backward.Delay)
	}
	sameDelays(t, "round trip", l.RoundTrip, delaysOf(20, 20, 23, 23, 23))
	// The variation is the clocks' difference taken out: 2 and 1 ms.
	if !near(l.Forward.IPDVMs, 2) || !near(l.Backward.IPDVMs, 1) {
		t.Fatalf("ipdv %v %v", *l.Forward.IPDVMs, *l.Backward.IPDVMs)
	}
}

func TestAHopCountTieGoesToTheFewerHopsAndBadEstimatesToUnknown(t *testing.T) {
	var replies []twamp.Reply
	for i, ttl := range []uint8{251, 252, 251, 252} {
		replies = append(replies, reply(uint32(i), uint32(i), msec, msec, ttl, ttl, twamp.ErrorEstimate(0x8000))) // multiplier 0
	}
	l := Summarize(DefaultSpec(), twamp.Outcome{Sent: 4, Replies: replies}, twamp.NewErrorEstimate(true, msec))
	if *l.Forward.Hops != 3 || *l.Backward.Hops != 3 {
		t.Fatalf("hops %d %d", *l.Forward.Hops, *l.Backward.Hops)
	}
	if c := l.ReflectorClock; c.Synchronized || c.ErrorMs != maxErrorMs {
		t.Fatalf("an estimate RFC 4656 does not allow reads as %+v", c)
	}
}
