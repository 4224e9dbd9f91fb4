// Package flowsweep measures the RTT of many flows to one peer at once. Each flow has its own
// source port, so a router hashing the 5-tuple puts each on its own ECMP member, and probes
// go round-robin over the flows: flows that sit on a slower member show it as their own
// steady RTT, while congestion or a route change moves all flows together.
//
// Over UDP the peer's echo responder (package echo) answers; over TCP the RTT is the time
// connect() takes, against any listening port. Neither needs raw sockets.
package flowsweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/echo"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// TestType is the plan's name for this probe.
const TestType = "flowsweep"

// Prober runs flow sweeps. Now is the wall clock of result timestamps (RTTs always come from
// the monotonic clock); a field so tests can replace it.
type Prober struct {
	Now func() time.Time
}

// New returns a prober on the system clock.
func New() *Prober { return &Prober{Now: time.Now} }

// Run sweeps the test's peer and returns the result. Unanswered probes are data (lost
// Lasts is how long a round takes: every probe at its spacing, then the last one's timeout.
func (p *Prober) Lasts(test plan.Test) time.Duration {
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		return 0
	}
	return time.Duration(spec.probes())*spec.interval() + spec.timeout()
}

// samples); only a sweep that could not be carried out is a failed result.
func (p *Prober) Run(ctx context.Context, test plan.Test, planVersion string) result.Result {
	res := result.New(TestType, test.ID, planVersion, test.Peer.Address, test.Peer.ID, p.Now())
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		res.Fail("invalid flowsweep spec: " + err.Error())
		return res
	}
	samples, err := p.Sweep(ctx, spec, test.Peer.Address)
	res.EndedAt = p.Now().UTC()
	if err != nil {
		res.Fail(err.Error())
		return res
	}
	res.FlowSweep = &result.FlowSweep{
		Protocol: spec.Protocol, Port: spec.Port, Flows: spec.Flows, SamplesPerFlow: spec.SamplesPerFlow,
		IntervalMs: float64(spec.IntervalMs), Samples: samples,
	}
	return res
}

// Sweep runs one round against address and returns its samples in the order they were sent.
func (p *Prober) Sweep(ctx context.Context, spec Spec, address string) ([]result.FlowSweepSample, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("invalid flowsweep spec: %w", err)
	}
	host, _ := probe.Target(address)
	target := net.JoinHostPort(host, strconv.Itoa(spec.Port))
	sw := newSweep(spec, p.Now())
	var err error
	if spec.Protocol == "tcp" {
		err = sw.runTCP(ctx, target)
	} else {
		err = sw.runUDP(ctx, target)
	}
	if err == nil && ctx.Err() != nil {
		err = errors.New("flowsweep cancelled (agent stopping)")
	}
	if err != nil {
		return nil, err
	}
	return sw.samples, nil
}

// sweep is one round's bookkeeping: sample k is flow k % Flows, seq k / Flows.
type sweep struct {
	spec Spec
	// base is the round's start on the monotonic clock; wall the same moment on Now.
	base time.Time
	wall time.Time

	mu       sync.Mutex
	samples  []result.FlowSweepSample
	sentAt   []time.Duration // since base
	sent     []bool
	answered []bool
}

func newSweep(spec Spec, wall time.Time) *sweep {
	n := spec.probes()
	sw := &sweep{spec: spec, base: time.Now(), wall: wall.UTC(), samples: make([]result.FlowSweepSample, n),
		sentAt: make([]time.Duration, n), sent: make([]bool, n), answered: make([]bool, n)}
	for k := range sw.samples {
		flow, seq := spec.slot(k)
		sw.samples[k] = result.FlowSweepSample{Flow: flow, Seq: seq, Time: sw.wall.Add(time.Duration(k) * spec.interval())}
	}
	return sw
}

func (sw *sweep) since() time.Duration { return time.Since(sw.base) }

// waitSlot sleeps until probe k is due; false when ctx ended first.
func (sw *sweep) waitSlot(ctx context.Context, k int) bool {
	wait := time.Duration(k)*sw.spec.interval() - sw.since()
	if wait <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (sw *sweep) markSent(k, srcPort int, at time.Duration) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.sent[k], sw.sentAt[k] = true, at
	sw.samples[k].SrcPort = srcPort
	sw.samples[k].Time = sw.wall.Add(at)
}

// answer records an RTT for probe k received at; answers after the timeout, duplicates and
// answers to probes never sent are not samples.
func (sw *sweep) answer(k int, at time.Duration) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if !sw.sent[k] || sw.answered[k] {
		return
	}
	rtt := at - sw.sentAt[k]
	if rtt < 0 || rtt > sw.spec.timeout() {
		return
	}
	sw.answered[k] = true
	ms := math.Round(float64(rtt)/float64(time.Microsecond)) / 1000 // µs resolution
	sw.samples[k].RTTMs = &ms
}

func (sw *sweep) fail(k int, reason string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.samples[k].Error == "" {
		sw.samples[k].Error = truncate(reason, 200)
	}
}

// markLost names why each unanswered probe without another reason has no RTT.
func (sw *sweep) markLost(reason string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for k := range sw.samples {
		if sw.sent[k] && !sw.answered[k] && sw.samples[k].Error == "" {
			sw.samples[k].Error = reason
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// runUDP sends echo requests from one connected socket per flow and times the replies.
func (sw *sweep) runUDP(ctx context.Context, target string) error {
	raddr, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		return fmt.Errorf("flowsweep cannot resolve the peer: %w", err)
	}
	conns := make([]*net.UDPConn, sw.spec.Flows)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	// Each socket is bound for the whole round, so the kernel gives each its own port. A
	// connected socket also hears only the peer's port, and hears ICMP port unreachable.
	ports := make([]int, sw.spec.Flows)
	for f := range conns {
		if conns[f], err = net.DialUDP("udp", nil, raddr); err != nil {
			return fmt.Errorf("flowsweep cannot open the socket of flow %d: %w", f, err)
		}
		ports[f] = conns[f].LocalAddr().(*net.UDPAddr).Port
	}
	round := rand.Uint32()

	var readers sync.WaitGroup
	for f, c := range conns {
		readers.Add(1)
		go func() { defer readers.Done(); sw.receive(f, c, round) }()
	}
	stopReaders := func(at time.Time) {
		for _, c := range conns {
			_ = c.SetReadDeadline(at)
		}
	}
	stop := context.AfterFunc(ctx, func() { stopReaders(time.Now()) })
	defer stop()

	last := time.Duration(0)
	for k := range sw.spec.probes() {
		if !sw.waitSlot(ctx, k) {
			break
		}
		flow, seq := sw.spec.slot(k)
		last = sw.since()
		sw.markSent(k, ports[flow], last)
		packet := echo.Packet{Round: round, Flow: uint16(flow), Seq: uint16(seq), SentNs: int64(last)}
		if _, err := conns[flow].Write(packet.Marshal(echo.HeaderLen)); err != nil {
			sw.fail(k, sendError(err))
		}
	}
	if ctx.Err() == nil {
		stopReaders(sw.base.Add(last + sw.spec.timeout()))
	}
	readers.Wait()
	sw.markLost(fmt.Sprintf("no echo within %d ms", sw.spec.TimeoutMs))
	return nil
}

// receive reads flow f's replies until its socket's deadline.
func (sw *sweep) receive(flow int, conn *net.UDPConn, round uint32) {
	buf := make([]byte, echo.MaxLen+1)
	for {
		n, err := conn.Read(buf)
		at := sw.since()
		if errors.Is(err, syscall.ECONNREFUSED) {
			sw.unreachable(flow)
			continue
		}
		if err != nil {
			return // deadline or closed
		}
		packet, err := echo.Decode(buf[:n])
		if err != nil || !packet.Reply || packet.Round != round || int(packet.Flow) != flow ||
			int(packet.Seq) >= sw.spec.SamplesPerFlow {
			continue
		}
		k := int(packet.Seq)*sw.spec.Flows + flow
		if sw.echoedSendTime(k) != packet.SentNs {
			continue
		}
		sw.answer(k, at)
	}
}

func (sw *sweep) echoedSendTime(k int) int64 {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return int64(sw.sentAt[k])
}

// unreachable marks flow's latest unanswered probe: an ICMP port unreachable came back.
func (sw *sweep) unreachable(flow int) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for k := len(sw.samples) - sw.spec.Flows + flow; k >= 0; k -= sw.spec.Flows {
		if sw.sent[k] {
			if !sw.answered[k] && sw.samples[k].Error == "" {
				sw.samples[k].Error = "port unreachable (no echo responder listening)"
			}
			return
		}
	}
}

func sendError(err error) string {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "port unreachable (no echo responder listening)"
	}
	return "send failed: " + err.Error()
}

// runTCP times connect() from one fixed source port per flow. The ports are reserved for the
// round by sockets bound but never connected; each probe binds its port again beside the
// reservation (SO_REUSEADDR) and leaves with a reset, so no TIME_WAIT blocks the next one.
func (sw *sweep) runTCP(ctx context.Context, target string) error {
	raddr, err := net.ResolveTCPAddr("tcp", target)
	if err != nil {
		return fmt.Errorf("flowsweep cannot resolve the peer: %w", err)
	}
	ports, release, err := reservePorts(raddr.IP.To4() == nil, sw.spec.Flows)
	if err != nil {
		return fmt.Errorf("flowsweep cannot reserve source ports: %w", err)
	}
	defer release()

	// One probe of a flow at a time: its next one needs the same 4-tuple free.
	flowLocks := make([]sync.Mutex, sw.spec.Flows)
	var probes sync.WaitGroup
	for k := range sw.spec.probes() {
		if !sw.waitSlot(ctx, k) {
			break
		}
		flow, _ := sw.spec.slot(k)
		probes.Add(1)
		go func() {
			defer probes.Done()
			flowLocks[flow].Lock()
			defer flowLocks[flow].Unlock()
			sw.handshake(ctx, k, ports[flow], raddr)
		}()
	}
	probes.Wait()
	sw.markLost(fmt.Sprintf("no handshake within %d ms", sw.spec.TimeoutMs))
	return nil
}

func (sw *sweep) handshake(ctx context.Context, k, port int, raddr *net.TCPAddr) {
	if ctx.Err() != nil {
		return
	}
	began := time.Duration(-1)
	dialer := net.Dialer{
		LocalAddr: &net.TCPAddr{Port: port},
		Timeout:   sw.spec.timeout(),
		// Control runs just before bind() and connect(): the probe's send time.
		Control: func(_, _ string, c syscall.RawConn) error {
			var optErr error
			if err := c.Control(func(fd uintptr) {
				optErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			}); err != nil {
				return err
			}
			began = sw.since()
			sw.markSent(k, port, began)
			return optErr
		},
	}
	conn, err := dialer.DialContext(ctx, "tcp", raddr.String())
	at := sw.since()
	if began < 0 { // never reached connect(): still a probe of this flow, at this time
		sw.markSent(k, port, at)
	}
	if err == nil {
		_ = conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
		sw.answer(k, at)
		return
	}
	var ne net.Error
	switch {
	case ctx.Err() != nil:
	case errors.As(err, &ne) && ne.Timeout():
		// lost: markLost names it
	case errors.Is(err, syscall.ECONNREFUSED):
		sw.fail(k, "connection refused")
	case errors.Is(err, syscall.EADDRINUSE), errors.Is(err, syscall.EADDRNOTAVAIL):
		sw.fail(k, fmt.Sprintf("source port %d unavailable: %v", port, err))
	case errors.Is(err, syscall.EHOSTUNREACH):
		sw.fail(k, "host unreachable")
	case errors.Is(err, syscall.ENETUNREACH):
		sw.fail(k, "network unreachable")
	default:
		sw.fail(k, "connect failed: "+err.Error())
	}
}

// reservePorts binds n TCP sockets to kernel-chosen, distinct ports and then marks them
// reusable, so the probes can bind the same ports beside them while nothing else can.
func reservePorts(ipv6 bool, n int) ([]int, func(), error) {
	family := syscall.AF_INET
	var sa syscall.Sockaddr = &syscall.SockaddrInet4{}
	if ipv6 {
		family, sa = syscall.AF_INET6, &syscall.SockaddrInet6{}
	}
	fds := make([]int, 0, n)
	release := func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}
	ports := make([]int, 0, n)
	for range n {
		fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			release()
			return nil, nil, err
		}
		fds = append(fds, fd)
		// Bound before SO_REUSEADDR is set, so the kernel picks a port no one else holds.
		if err := syscall.Bind(fd, sa); err != nil {
			release()
			return nil, nil, err
		}
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			release()
			return nil, nil, err
		}
		bound, err := syscall.Getsockname(fd)
		if err != nil {
			release()
			return nil, nil, err
		}
		switch a := bound.(type) {
		case *syscall.SockaddrInet4:
			ports = append(ports, a.Port)
		case *syscall.SockaddrInet6:
			ports = append(ports, a.Port)
		}
	}
	return ports, release, nil
}
