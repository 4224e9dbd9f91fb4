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
		packet, _ := SenderPacket{Seq: uint32(seq), Sent: TimestampOf(at), Error: s.Error}.Marshal(s.Size)
		sent.set(seq, at) // before the packet leaves: collect reads it once an answer names seq
		if _, err := conn.Write(packet); err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
			_ = conn.SetReadDeadline(time.Now())
			<-answers
			return Outcome{}, fmt.Errorf("twamp: sending packet %d: %w", seq, err)
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
	collected.lose()
	return collected, nil
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
			if errors.Is(err, syscall.ECONNREFUSED) { // no reflector yet: an ICMP answer
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
func (o *Outcome) lose() {
	reached := 0
	for _, r := range o.Replies {
		reached = max(reached, int(r.ReflectorSeq)+1)
	}
	reached = min(reached, o.Sent) // a reflector that numbers wrongly cannot make packets up
	o.BackwardLost = max(0, reached-len(o.Replies))
	o.ForwardLost = o.Sent - reached
}

// sendWithTTL255 makes the session's packets leave with the highest TTL (hop limit), so the
// reflector's Sender TTL says how many hops they crossed.
func sendWithTTL255(conn *net.UDPConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var setErr error
	err = raw.Control(func(fd uintptr) {
		v4 := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_TTL, 255)
		v6 := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_UNICAST_HOPS, 255)
		if v4 != nil && v6 != nil {
			setErr = errors.Join(v4, v6)
		}
	})
	return errors.Join(err, setErr)
}
