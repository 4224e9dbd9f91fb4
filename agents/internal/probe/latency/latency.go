// Package latency measures one-way delay and loss each way to a peer's TWAMP-light
// reflector (package twamp), without end: each run is one report interval of packets sent
// back to back with the next, and its result that interval's loss, reordering, delays and
// delay variation per direction, with both clocks as their packets declared them.
package latency

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe"
	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// TestType is the plan's name for this probe.
const TestType = "latency"

// Prober runs TWAMP-light sessions. Now is the wall clock of result timestamps (the
// packets' come from time.Now); Clock is this host's clock state their error estimates
// declare. Both are fields so tests can replace them.
type Prober struct {
	Now   func() time.Time
	Clock hostclock.Reader
}

// New returns a prober whose packets declare the clock clock reads.
func New(clock hostclock.Reader) *Prober { return &Prober{Now: time.Now, Clock: clock} }

// Lasts is a run's length: its report interval, which it fills.
func (p *Prober) Lasts(test plan.Test) time.Duration {
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		return 0
	}
	return spec.reportInterval()
}

// Run measures one report interval against the test's peer (or up to the end the scheduler
// set, plan.RunEnd). Loss, all of it included, is
// data; a run fails when it cannot send, or when nothing came back but the kernel's word
// that nothing listens there (or no route leads there): that is a reflector missing, not a
// path losing every packet.
func (p *Prober) Run(ctx context.Context, test plan.Test, planVersion string) result.Result {
	began := time.Now()
	res := result.New(TestType, test.ID, planVersion, test.Peer.Address, test.Peer.ID, p.Now())
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		res.Fail("invalid latency spec: " + err.Error())
		return res
	}
	until := began.Add(spec.reportInterval())
	if end, ok := plan.RunEnd(ctx); ok {
		// The scheduler cut the interval where Fathom's own throughput test loads the path.
		until = end
	}
	section, err := p.Measure(ctx, spec, test.Peer.Address, until)
	res.EndedAt = p.Now().UTC()
	switch {
	case ctx.Err() != nil:
		res.Fail("latency cancelled (agent stopping)")
	case err != nil:
		res.Fail(err.Error())
	default:
		res.Latency = section
	}
	return res
}

// Measure runs one session of spec.Packets() packets to the reflector at address and
// spec.Port, over by until, and summarizes it. The spec is not validated here (tests
// measure intervals shorter than a plan may hold).
func (p *Prober) Measure(ctx context.Context, spec Spec, address string, until time.Time) (*result.Latency, error) {
	// A clock that cannot be read is declared unknown: the delays are still worth having.
	clock, _ := hostclock.Current(p.Clock)
	estimate := twamp.NewErrorEstimate(clock.Synchronized, clock.MaxError)
	host, family := probe.Target(address)
	reflector := net.JoinHostPort(host, strconv.Itoa(spec.Port))
	network := map[int]string{4: "udp4", 6: "udp6"}[family]
	if network == "" {
		network = "udp"
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, network, reflector)
	if err != nil {
		return nil, fmt.Errorf("cannot open a UDP socket to the reflector at %s: %w", reflector, err)
	}
	defer conn.Close()
	udp := conn.(*net.UDPConn)
	if err := setDSCP(udp, spec.DSCP); err != nil {
		return nil, fmt.Errorf("cannot mark the packets with DSCP %d: %w", spec.DSCP, err)
	}
	session := twamp.Session{
		Count: spec.Packets(), Interval: spec.packetInterval(), Size: spec.SizeBytes,
		Linger: spec.packetTimeout(), Error: estimate, Until: until,
	}
	out, err := session.Measure(ctx, udp)
	if err != nil {
		return nil, err
	}
	if len(out.Replies) == 0 && out.Unreachable > 0 {
		return nil, fmt.Errorf("no TWAMP-light reflector answered on %s (%s)", reflector, why(out.UnreachableErr))
	}
	return Summarize(spec, out, estimate), nil
}

// why is the kernel's words for an ICMP error ("connection refused": port unreachable).
func why(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// setDSCP marks the socket's packets with dscp (the upper six bits of the IPv4 TOS byte or
// the IPv6 traffic class), so a test measures the queue that class gets.
func setDSCP(conn *net.UDPConn, dscp int) error {
	remote, ok := conn.RemoteAddr().(*net.UDPAddr)
	if !ok {
		return errors.New("the socket has no peer")
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var setErr error
	err = raw.Control(func(fd uintptr) {
		if remote.AddrPort().Addr().Unmap().Is4() {
			setErr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_TOS, dscp<<2)
		} else {
			setErr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_TCLASS, dscp<<2)
		}
	})
	return errors.Join(err, setErr)
}
