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
)

// Reflector answers TWAMP-light test packets, from the peers Admit allows only (the agent's
// planned peers, as its iperf3 server admits), each at most Rate packets a second with a
// burst of Burst: an open reflector would be an amplifier for anyone's traffic.
type Reflector struct {
	Conn  *net.UDPConn
	Admit func(netip.Addr) bool
	Error ErrorEstimate // this host's clock, as its answers declare it
	Rate  float64       // packets a second per sending address and port
	Burst float64
	Log   *slog.Logger
	// Now is the clock the timestamps come from (tests); time.Now when nil.
	Now func() time.Time
}

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

// EnableTTL asks the kernel for each datagram's TTL (IPv4) or hop limit (IPv6), which the
// reflector returns as Sender TTL: the sender reads the hops its packet crossed from it.
func EnableTTL(conn *net.UDPConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var setErr error
	err = raw.Control(func(fd uintptr) {
		v4 := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_RECVTTL, 1)
		v6 := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_RECVHOPLIMIT, 1)
		if v4 != nil && v6 != nil {
			setErr = errors.Join(v4, v6)
		}
	})
	return errors.Join(err, setErr)
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

// Serve answers until ctx ends or the connection fails; it returns what it counted.
func (r *Reflector) Serve(ctx context.Context) (Counts, error) {
	now := r.Now
	if now == nil {
		now = time.Now
	}
	stop := context.AfterFunc(ctx, func() { _ = r.Conn.SetReadDeadline(time.Now()) })
	defer stop()
	sessions := map[netip.AddrPort]*session{}
	var counts Counts
	buf, oob := make([]byte, MaxPacketSize+1), make([]byte, 128)
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
			Seq: s.next, Error: r.Error, Received: TimestampOf(received),
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
		if _, err := r.Conn.WriteToUDPAddrPort(out, from); err != nil {
			if r.Log != nil {
				r.Log.Warn("twamp reflector: answer not sent", "peer", from, "error", err)
			}
			continue
		}
		s.next++
		counts.Answered++
	}
}
