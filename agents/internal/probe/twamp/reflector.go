package twamp

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/pktinfo"
)

// Reflector answers TWAMP-light test packets, from the peers Admit allows only (the agent's
// planned peers, as its iperf3 server admits), each at most Rate packets a second with a
// burst of Burst: an open reflector would be an amplifier for anyone's traffic.
type Reflector struct {
	Conn  *net.UDPConn
	Admit func(netip.Addr) bool
	// Error is this host's clock as each answer declares it, read at each answer: a
	// reflector runs for months, and its clock's synchronization comes and goes. Nil
	// declares UnknownClock.
	Error func() ErrorEstimate
	Rate  float64 // packets a second per sending address and port
	Burst float64
	Log   *slog.Logger
	// Now is the clock the timestamps come from (tests); time.Now when nil.
	Now func() time.Time
}

// UnknownClock is an unsynchronized clock whose error nobody knows: the largest estimate.
const UnknownClock = ErrorEstimate(maxScale<<8 | 0xff)

// A session is one sender address and port; its state ends after sessionIdle.
const sessionIdle = time.Minute

type session struct {
	next   uint32 // the reflector's sequence number for its next answer
	tokens float64
	seen   time.Time
}

// Counts is what a reflector did with what it read, for its log and tests.
type Counts struct {
	Answered, Refused, Limited, Malformed int
}

// receivedTTL is the TTL or hop limit in a datagram's control messages, 0 when absent.
func receivedTTL(oob []byte) uint8 {
	messages, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range messages {
		isTTL := (m.Header.Level == syscall.IPPROTO_IP && m.Header.Type == syscall.IP_TTL) ||
			(m.Header.Level == syscall.IPPROTO_IPV6 && m.Header.Type == syscall.IPV6_HOPLIMIT)
		if isTTL && len(m.Data) >= 4 {
			return uint8(binary.NativeEndian.Uint32(m.Data[:4])) // a C int in host order
		}
	}
	return 0
}

// Serve answers until ctx ends or the connection fails; it returns what it counted. Its
// answers leave with TTL 255 (RFC 5357), so the sender reads the hops back from their TTL,
// and, on a socket listening on all addresses, from the address each packet was sent to.
func (r *Reflector) Serve(ctx context.Context) (Counts, error) {
	now := r.Now
	if now == nil {
		now = time.Now
	}
	clock := r.Error
	if clock == nil {
		clock = func() ErrorEstimate { return UnknownClock }
	}
	var counts Counts
	if err := errors.Join(EnableTTL(r.Conn), sendWithTTL255(r.Conn)); err != nil {
		return counts, err
	}
	answerFrom := pktinfo.Enable(r.Conn)
	stop := context.AfterFunc(ctx, func() { _ = r.Conn.SetReadDeadline(time.Now()) })
	defer stop()
	sessions := map[netip.AddrPort]*session{}
	// Room for the TTL and both kinds of packet information (a dual-stack socket's IPv4).
	buf, oob := make([]byte, MaxPacketSize+1), make([]byte, 128+pktinfo.Space)
	replyOOB := make([]byte, 0, pktinfo.Space)
	lastSweep := now()
	for {
		n, oobn, _, from, err := r.Conn.ReadMsgUDPAddrPort(buf, oob)
		received := now()
		if err != nil {
			if ctx.Err() != nil {
				return counts, nil
			}
			return counts, err
		}
		if received.Sub(lastSweep) > sessionIdle {
			for key, s := range sessions {
				if received.Sub(s.seen) > sessionIdle {
					delete(sessions, key)
				}
			}
			lastSweep = received
		}
		peer := from.Addr().Unmap()
		if r.Admit == nil || !r.Admit(peer) {
			counts.Refused++
			continue
		}
		packet, err := ParseSenderPacket(buf[:n])
		if err != nil || n > MaxPacketSize {
			counts.Malformed++
			continue
		}
		s := sessions[from]
		if s == nil {
			s = &session{tokens: r.Burst}
			sessions[from] = s
		} else {
			s.tokens = min(r.Burst, s.tokens+received.Sub(s.seen).Seconds()*r.Rate)
		}
		s.seen = received
		if s.tokens < 1 {
			counts.Limited++
			continue
		}
		s.tokens--
		answer := ReflectorPacket{
			Seq: s.next, Error: clock(), Received: TimestampOf(received),
			SenderSeq: packet.Seq, SenderSent: packet.Sent, SenderError: packet.Error,
			SenderTTL: receivedTTL(oob[:oobn]),
		}
		answer.Sent = TimestampOf(now())
		// As many bytes as came, where that holds the answer (RFC 6038's symmetric size).
		out, err := answer.Marshal(max(n, ReflectorHeaderSize))
		if err != nil {
			counts.Malformed++
			continue
		}
		if local, ok := pktinfo.ArrivedOn(oob[:oobn], from); answerFrom && ok {
			_, _, err = r.Conn.WriteMsgUDPAddrPort(out, pktinfo.AppendSendFrom(replyOOB[:0], local), from)
		} else {
			_, err = r.Conn.WriteToUDPAddrPort(out, from)
		}
		if err != nil {
			if r.Log != nil {
				r.Log.Warn("twamp reflector: answer not sent", "peer", from, "error", err)
			}
			continue
		}
		s.next++
		counts.Answered++
	}
}
