// Package reflector runs the agent's TWAMP-light reflector (package twamp) as a service, for
// the latency tests of its peers: it answers only the senders the plan names (twamp_peers),
// declares this host's clock in each answer, and listens again with back-off when its port
// cannot be had, as the echo responder does, rather than stop the agent.
package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/restart"
)

// Service is the reflector. Set its fields before Run; Admit may be called at any time.
type Service struct {
	Port int
	// Bind is the address to listen on; empty means all.
	Bind string
	// Rate bounds the answers to one sender (address and port) a second, with a burst of a
	// second's worth: an open reflector would multiply anyone's traffic.
	Rate  float64
	Clock hostclock.Reader
	Log   *slog.Logger
	// MinBackoff and MaxBackoff space the attempts to listen again.
	MinBackoff, MaxBackoff time.Duration
	// ResolveEvery is how often planned host names are looked up again: their addresses
	// change without the plan changing.
	ResolveEvery time.Duration
	// Resolve looks a host name up; net.DefaultResolver when nil (tests replace it).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Ready is told the address each time the reflector starts listening (tests).
	Ready func(net.Addr)

	mu       sync.Mutex
	peers    []plan.TwampPeer
	resolved map[string][]netip.Addr // the planned host names' addresses
	admitted atomic.Pointer[map[netip.Addr]bool]
	wake     chan struct{}
	counts   twamp.Counts
}

// New returns a reflector with the agent's back-off and look-up intervals.
func New(port int, bind string, rate float64, clock hostclock.Reader, log *slog.Logger) *Service {
	return &Service{Port: port, Bind: bind, Rate: rate, Clock: clock, Log: log,
		MinBackoff: time.Second, MaxBackoff: time.Minute, ResolveEvery: 5 * time.Minute}
}

// Admit makes peers the only senders answered from now on: IP literals at once, host names
// once Run has looked them up (a name looked up before keeps its addresses meanwhile). Nil
// admits no one: an expired plan's peers are not answered.
func (s *Service) Admit(peers []plan.TwampPeer) {
	s.mu.Lock()
	s.peers = slices.Clone(peers)
	names := s.publish()
	s.mu.Unlock()
	if names {
		s.poke()
	}
}

// Admits reports whether a sender's address is a planned peer's.
func (s *Service) Admits(addr netip.Addr) bool {
	admitted := s.admitted.Load()
	return admitted != nil && (*admitted)[normal(addr)]
}

// normal is an address as the reflector compares it: IPv4-mapped as IPv4, no zone.
func normal(addr netip.Addr) netip.Addr { return addr.Unmap().WithZone("") }

// literal is a planned address that is an IP literal, in URL brackets or not.
func literal(address string) (netip.Addr, bool) {
	if len(address) > 1 && address[0] == '[' && address[len(address)-1] == ']' {
		address = address[1 : len(address)-1]
	}
	addr, err := netip.ParseAddr(address)
	return normal(addr), err == nil
}

// publish rebuilds the admitted set from the peers and the names' last addresses (s.mu
// held), and reports whether any peer is a host name.
func (s *Service) publish() (names bool) {
	admitted := map[netip.Addr]bool{}
	for _, peer := range s.peers {
		if addr, ok := literal(peer.Address); ok {
			admitted[addr] = true
			continue
		}
		names = true
		for _, addr := range s.resolved[peer.Address] {
			admitted[normal(addr)] = true
		}
	}
	s.admitted.Store(&admitted)
	return names
}

// poke has the names looked up soon; it never waits.
func (s *Service) poke() {
	select {
	case s.wakeup() <- struct{}{}:
	default:
	}
}

func (s *Service) wakeup() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	return s.wake
}

// Counts is what the reflector did with what it read, up to its last stop.
func (s *Service) Counts() twamp.Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Run answers until ctx ends, listening again with back-off while the port cannot be had
// (another process holds it, or port 862 without CAP_NET_BIND_SERVICE).
func (s *Service) Run(ctx context.Context) {
	s.poke() // look the names up at once
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.resolveNames(ctx) }()
	defer wg.Wait()
	restart.Loop(ctx, s.MinBackoff, s.MaxBackoff, s.serve, func(err error, retryIn time.Duration) {
		s.Log.Error("twamp reflector not answering; peers' latency tests to this host lose every packet until it does",
			"port", s.Port, "bind", s.Bind, "error", err, "retry_in", retryIn)
	})
}

func (s *Service) serve(ctx context.Context) error {
	address := net.JoinHostPort(s.Bind, strconv.Itoa(s.Port))
	conn, err := twamp.Listen(ctx, address)
	if errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("%w (ports below 1024 need CAP_NET_BIND_SERVICE, which the fathom-agent unit grants)", err)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	s.Log.Info("twamp reflector listening", "udp", conn.LocalAddr().String())
	if s.Ready != nil {
		s.Ready(conn.LocalAddr())
	}
	r := &twamp.Reflector{Conn: conn, Admit: s.Admits, Error: s.clock, Rate: s.Rate, Burst: max(s.Rate, 1), Log: s.Log}
	counts, err := r.Serve(ctx)
	s.mu.Lock()
	s.counts.Answered += counts.Answered
	s.counts.Refused += counts.Refused
	s.counts.Limited += counts.Limited
	s.counts.Malformed += counts.Malformed
	s.mu.Unlock()
	s.Log.Info("twamp reflector stopped", "answered", counts.Answered, "refused", counts.Refused,
		"rate_limited", counts.Limited, "malformed", counts.Malformed)
	return err
}

// clock is this host's clock as an answer declares it, read at each answer.
func (s *Service) clock() twamp.ErrorEstimate {
	state, _ := hostclock.Current(s.Clock)
	return twamp.NewErrorEstimate(state.Synchronized, state.MaxError)
}

// resolveNames looks the planned host names up when Admit brings new ones and every
// ResolveEvery, until ctx ends.
func (s *Service) resolveNames(ctx context.Context) {
	wake := s.wakeup()
	every := s.ResolveEvery
	if every <= 0 {
		every = 5 * time.Minute
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-ticker.C:
		}
		s.resolve(ctx)
	}
}

// resolve looks each planned host name up; one that fails keeps its last addresses.
func (s *Service) resolve(ctx context.Context) {
	s.mu.Lock()
	var names []string
	for _, peer := range s.peers {
		if _, ok := literal(peer.Address); !ok {
			names = append(names, peer.Address)
		}
	}
	s.mu.Unlock()
	lookup := s.Resolve
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	found := map[string][]netip.Addr{}
	for _, name := range names {
		lookupCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		addrs, err := lookup(lookupCtx, name)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("twamp reflector cannot look a planned peer up; its packets are not answered", "peer", name, "error", err)
			}
			continue
		}
		found[name] = addrs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := map[string][]netip.Addr{}
	for _, peer := range s.peers { // the names still planned, now
		if addrs, ok := found[peer.Address]; ok {
			kept[peer.Address] = addrs
		} else if addrs, ok := s.resolved[peer.Address]; ok {
			kept[peer.Address] = addrs
		}
	}
	s.resolved = kept
	s.publish()
}
