package echo

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/pktinfo"
	"github.com/fathom-net/fathom/agents/internal/restart"
)

// Responder answers peers' flow-sweep probes on one port: UDP echo requests, and TCP
// connections (accepted and closed at once) for sweeps that time the TCP handshake.
type Responder struct {
	Port int
	// Bind is the address to listen on; empty means all.
	Bind string
	Log  *slog.Logger
	// RatePerSource and Burst bound the replies to one source address (a token bucket):
	// the fastest plannable sweep is 1000 packets/s, so anything above is not a prober.
	RatePerSource float64
	Burst         float64
	// RateTotal bounds all replies together, so spoofed sources (one per packet) cannot
	// turn the responder into a reflector of unbounded rate.
	RateTotal  float64
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Now is the limiter's clock.
	Now func() time.Time
	// Ready is told the UDP address each time the responder starts listening (tests).
	Ready func(udp net.Addr)
}

// New returns a responder with the default limits.
func New(port int, bind string, log *slog.Logger) *Responder {
	return &Responder{Port: port, Bind: bind, Log: log, RatePerSource: 1000, Burst: 1000, RateTotal: 10000,
		MinBackoff: time.Second, MaxBackoff: time.Minute, Now: time.Now}
}

// Run serves until ctx ends, listening again with back-off when the port cannot be had
// (another process holds it) or the sockets fail.
func (r *Responder) Run(ctx context.Context) {
	restart.Loop(ctx, r.MinBackoff, r.MaxBackoff, r.serve, func(err error, retryIn time.Duration) {
		r.Log.Warn("echo responder stopped; restarting", "port", r.Port, "error", err, "retry_in", retryIn)
	})
}

func (r *Responder) serve(ctx context.Context) error {
	address := net.JoinHostPort(r.Bind, strconv.Itoa(r.Port))
	var lc net.ListenConfig
	udp, err := (&net.ListenConfig{Control: pktinfo.BeforeBind}).ListenPacket(ctx, "udp", address)
	if err != nil {
		return err
	}
	defer udp.Close()
	// TCP takes the UDP port's number, also when Port 0 let the kernel choose (tests).
	port := udp.LocalAddr().(*net.UDPAddr).Port
	tcp, err := lc.Listen(ctx, "tcp", net.JoinHostPort(r.Bind, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer tcp.Close()
	r.Log.Info("echo responder listening", "udp", udp.LocalAddr().String(), "tcp", tcp.Addr().String())
	if r.Ready != nil {
		r.Ready(udp.LocalAddr())
	}

	stop := context.AfterFunc(ctx, func() { udp.Close(); tcp.Close() })
	defer stop()
	errs := make(chan error, 2)
	go func() { errs <- r.ServeUDP(udp.(*net.UDPConn)) }()
	go func() { errs <- acceptAndClose(tcp) }()
	err = <-errs
	udp.Close()
	tcp.Close()
	<-errs
	return err
}

// ServeUDP echoes requests arriving on conn until it is closed.
func (r *Responder) ServeUDP(conn *net.UDPConn) error {
	limiter := newLimiter(r.RatePerSource, r.Burst, r.Now)
	total := newLimiter(r.RateTotal, r.RateTotal, r.Now)
	// One byte more than MaxLen: a read that fills the buffer was too long to answer.
	buf := make([]byte, MaxLen+1)
	// Listening on all addresses, the reply leaves from the address the request came to.
	var oob, replyOOB []byte
	if pktinfo.Enable(conn) {
		oob = make([]byte, pktinfo.Space)
		replyOOB = make([]byte, 0, pktinfo.Space)
	}
	failures := 0
	for {
		n, oobn, _, from, err := conn.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// An ICMP error queued by an earlier reply surfaces here once; only a socket
			// that keeps failing is given up (Run opens a new one).
			if failures++; failures > 100 {
				return err
			}
			continue
		}
		failures = 0
		// Probers send from ephemeral ports; a privileged source port is a spoofed request
		// aimed at a service (DNS, NTP, chargen) through us.
		if from.Port() < 1024 || !Answer(buf[:n]) || !limiter.allow(from.Addr().Unmap()) ||
			!total.allow(netip.Addr{}) {
			continue
		}
		if local, ok := pktinfo.ArrivedOn(oob[:oobn], from); oobn > 0 && ok {
			_, _, _ = conn.WriteMsgUDPAddrPort(buf[:n], pktinfo.AppendSendFrom(replyOOB[:0], local), from)
			continue
		}
		_, _ = conn.WriteToUDPAddrPort(buf[:n], from)
	}
}

// acceptAndClose completes TCP handshakes for handshake-timing sweeps: the kernel answers
// the SYN; accepting only keeps the queue from filling, and nothing is ever read or sent.
func acceptAndClose(l net.Listener) error {
	for {
		conn, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of descriptors, or a connection reset before it was accepted: pause, go on.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// A plain close (FIN): a reset could reach the prober before its connect() returned
		// and turn a completed handshake into an error. The prober resets its end, which
		// leaves no TIME_WAIT on either side.
		conn.Close()
	}
}

// limiter is a token bucket per source address. The table is bounded: when it is full,
// idle sources (full buckets) are forgotten, and if none are, the table starts over.
type limiter struct {
	rate, burst float64
	now         func() time.Time
	mu          sync.Mutex
	buckets     map[netip.Addr]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxSources = 4096

func newLimiter(rate, burst float64, now func() time.Time) *limiter {
	if now == nil {
		now = time.Now
	}
	return &limiter{rate: rate, burst: burst, now: now, buckets: map[netip.Addr]*bucket{}}
}

func (l *limiter) allow(source netip.Addr) bool {
	if l.rate <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[source]
	if !ok {
		if len(l.buckets) >= maxSources {
			l.forgetIdle(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[source] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (l *limiter) forgetIdle(now time.Time) {
	for addr, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, addr)
		}
	}
	if len(l.buckets) >= maxSources {
		clear(l.buckets)
	}
}
