package twamp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// Session is what a Session-Sender sends: Count packets, one every Interval, each Size bytes
// (at least ReflectorHeaderSize, so the answers are as large), then waits Linger for late
// answers. Error is this host's clock, as its packets declare it.
type Session struct {
	Count    int
	Interval time.Duration
	Size     int
	Linger   time.Duration
	Error    ErrorEstimate
	// Until, when set, is when the session must be over: no packet leaves later than Linger
	// before it, so a sender that falls behind its ticks (a loaded host) sends fewer packets
	// rather than overrunning the interval its result covers.
	Until time.Time
	// Now is the clock the timestamps come from (tests); time.Now when nil.
	Now func() time.Time
}

// Reply is one answered packet, with the four times TWAMP gives.
type Reply struct {
	Seq          uint32 // the sender's
	ReflectorSeq uint32
	Sent         time.Time // by the sender's clock
	Reflected    time.Time // the reflector received it, by the reflector's clock
	Answered     time.Time // the reflector sent its answer, by the reflector's clock
	Received     time.Time // by the sender's clock
	ReflectorErr ErrorEstimate
	SenderTTL    uint8 // as the packet reached the reflector: hops = 255 - SenderTTL
	ReplyTTL     uint8 // as the answer reached the sender
}

// Forward is the one-way delay to the reflector; right only as far as the two clocks agree.
func (r Reply) Forward() time.Duration { return r.Reflected.Sub(r.Sent) }

// Backward is the one-way delay back from the reflector.
func (r Reply) Backward() time.Duration { return r.Received.Sub(r.Answered) }

// RoundTrip is the time on the network both ways, the reflector's own time taken out: one
// clock's difference each, so it holds whatever the clocks say.
func (r Reply) RoundTrip() time.Duration {
	return r.Received.Sub(r.Sent) - r.Answered.Sub(r.Reflected)
}

// Outcome is a session's packets and answers, and the losses they show in each direction.
type Outcome struct {
	Sent       int
	Replies    []Reply // in the order they arrived, duplicates left out
	Duplicates int
	Malformed  int // datagrams that were no answer to this session
	// The reflector numbers its answers 0, 1, 2, ...: the highest it sent tells how many
	// packets reached it. Lost on the way back are the answers missing below it; lost on
	// the way there the rest. Answers lost after the last one that came back count as lost
	// on the way there: a tail the sender cannot tell apart.
	ForwardLost  int
	BackwardLost int
	// Unreachable counts the errors the socket reported for ICMP messages about the
	// session's packets (port, host or network unreachable); UnreachableErr is the last.
	// With no answer at all they say why: no reflector listens, or no route leads there.
	Unreachable    int
	UnreachableErr error
}

// Measure runs the session on conn, connected to the reflector, until it is done or ctx
// ends (then with what came so far).
func (s Session) Measure(ctx context.Context, conn *net.UDPConn) (Outcome, error) {
	if s.Count < 1 || s.Interval <= 0 || s.Size < ReflectorHeaderSize || s.Size > MaxPacketSize {
		return Outcome{}, fmt.Errorf("twamp: a session needs a count, an interval and %d to %d bytes a packet",
			ReflectorHeaderSize, MaxPacketSize)
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	if err := sendWithTTL255(conn); err != nil {
		return Outcome{}, fmt.Errorf("twamp: %w", err)
	}
	if err := EnableTTL(conn); err != nil {
		return Outcome{}, fmt.Errorf("twamp: %w", err)
	}
	sent := &sendTimes{at: make([]time.Time, s.Count)}
	answers := make(chan Outcome, 1)
	go func() { answers <- s.collect(conn, sent, now) }()
	out := Outcome{}
	ticker := time.NewTicker(s.Interval)
	defer ticker.Stop()
	for seq := 0; seq < s.Count && ctx.Err() == nil; seq++ {
		at := now()
		if !s.Until.IsZero() && at.Add(s.Linger).After(s.Until) {
			break
		}
		packet, _ := SenderPacket{Seq: uint32(seq), Sent: TimestampOf(at), Error: s.Error}.Marshal(s.Size)
		sent.set(seq, at) // before the packet leaves: collect reads it once an answer names seq
		if _, err := conn.Write(packet); err != nil {
			if !unreachable(err) {
				_ = conn.SetReadDeadline(time.Now())
				<-answers
				return Outcome{}, fmt.Errorf("twamp: sending packet %d: %w", seq, err)
			}
			// The error is an earlier packet's, and this one is dropped with it: it
			// counts as sent and lost on the way there, as the path lost it.
			out.Unreachable++
			out.UnreachableErr = err
		}
		out.Sent++
		if seq < s.Count-1 {
			select {
			case <-ctx.Done():
			case <-ticker.C:
			}
		}
	}
	linger := s.Linger
	if ctx.Err() != nil {
		linger = 0
	}
	_ = conn.SetReadDeadline(time.Now().Add(linger))
	collected := <-answers
	collected.Sent = out.Sent
	collected.Unreachable += out.Unreachable
	if out.UnreachableErr != nil {
		collected.UnreachableErr = out.UnreachableErr
	}
	collected.lose()
	return collected, nil
}

// unreachable is an error a connected UDP socket reports for an ICMP message about an
// earlier packet, or a route that is missing for now: the packets concerned are lost, and
// the session goes on.
func unreachable(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

// collect reads answers until the connection's read deadline passes.
func (s Session) collect(conn *net.UDPConn, sent *sendTimes, now func() time.Time) Outcome {
	var out Outcome
	seen := map[uint32]bool{}
	buf, oob := make([]byte, MaxPacketSize+1), make([]byte, 128)
	for {
		n, oobn, _, _, err := conn.ReadMsgUDPAddrPort(buf, oob)
		received := now()
		if err != nil {
			var netErr net.Error
			if errors.As(err, &netErr) && netErr.Timeout() {
				return out
			}
			if unreachable(err) {
				out.Unreachable++
				out.UnreachableErr = err
				continue
			}
			return out
		}
		answer, err := ParseReflectorPacket(buf[:n])
		at, known := time.Time{}, false
		if err == nil {
			at, known = sent.get(answer.SenderSeq)
		}
		if !known || TimestampOf(at) != answer.SenderSent { // not an answer to a packet of ours
			out.Malformed++
			continue
		}
		if seen[answer.SenderSeq] {
			out.Duplicates++
			continue
		}
		seen[answer.SenderSeq] = true
		out.Replies = append(out.Replies, Reply{
			Seq: answer.SenderSeq, ReflectorSeq: answer.Seq, Sent: at,
			Reflected: answer.Received.Time(), Answered: answer.Sent.Time(), Received: received,
			ReflectorErr: answer.Error, SenderTTL: answer.SenderTTL, ReplyTTL: receivedTTL(oob[:oobn]),
		})
	}
}

// sendTimes is when each packet left, shared by the sending and the collecting goroutine.
type sendTimes struct {
	mu sync.Mutex
	at []time.Time
}

func (t *sendTimes) set(seq int, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.at[seq] = at
}

// get is when packet seq left; false for a number this session never sent.
func (t *sendTimes) get(seq uint32) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if int64(seq) >= int64(len(t.at)) || t.at[seq].IsZero() {
		return time.Time{}, false
	}
	return t.at[seq], true
}

// lose counts the losses each way from the reflector's numbering.
func (o *Outcome) lose() { o.ForwardLost, o.BackwardLost = Losses(o.Sent, o.Replies) }

// Losses splits what did not come back of sent packets into the two directions by the
// reflector's numbering (see Outcome), so that sent = len(replies) + forward + backward;
// replies are distinct packets of the sent ones.
func Losses(sent int, replies []Reply) (forward, backward int) {
	reached := 0
	for _, r := range replies {
		reached = max(reached, int(r.ReflectorSeq)+1)
	}
	// A reflector that numbers wrongly (or restarted its count) can neither make packets up
	// nor have had fewer than came back.
	reached = min(max(reached, len(replies)), sent)
	return sent - reached, reached - len(replies)
}
