package reflector

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// names is a resolver whose answers a test changes.
type names struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
}

func (n *names) set(name string, addrs ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var parsed []netip.Addr
	for _, a := range addrs {
		parsed = append(parsed, netip.MustParseAddr(a))
	}
	n.answers[name] = parsed
}

func (n *names) resolve(_ context.Context, name string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if addrs, ok := n.answers[name]; ok {
		return addrs, nil
	}
	return nil, errors.New("no such host")
}

// start runs s until the test ends and returns the address it listens on.
func start(t *testing.T, s *Service) net.Addr {
	t.Helper()
	ready := make(chan net.Addr, 1)
	s.Ready = func(a net.Addr) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("the reflector did not start")
		return nil
	}
}

// eventually waits for cond, which a background look-up makes true.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

func TestOnlyThePlannedPeersAreAdmitted(t *testing.T) {
	resolver := &names{answers: map[string][]netip.Addr{}}
	resolver.set("ps-geneva.example.net", "192.0.2.9", "2001:db8::9")
	s := New(0, "127.0.0.1", 100, hostclock.For(true), quiet)
	s.Resolve, s.ResolveEvery = resolver.resolve, 20*time.Millisecond
	admits := func(a string) bool { return s.Admits(netip.MustParseAddr(a)) }
	if admits("198.18.2.2") {
		t.Fatal("admitted before any plan")
	}
	s.Admit([]plan.TwampPeer{{Address: "198.18.2.2", Port: 862}, {Address: "[2001:db8::7]", Port: 862},
		{Address: "fe80::1%eth0", Port: 862}, {Address: "ps-geneva.example.net", Port: 862}})
	// Literals at once, whichever way the packet's source reads.
	if !admits("198.18.2.2") || !admits("::ffff:198.18.2.2") || !admits("2001:db8::7") || !admits("fe80::1%eth1") ||
		admits("198.18.2.3") || admits("2001:db8::8") {
		t.Fatal("the planned literals are not what is admitted")
	}
	start(t, s)
	eventually(t, "the planned host name was not looked up", func() bool { return admits("192.0.2.9") && admits("2001:db8::9") })

	// A name whose look-up fails keeps its last addresses; one that moves is followed.
	resolver.set("ps-lyon.example.net", "192.0.2.20")
	s.Admit([]plan.TwampPeer{{Address: "ps-geneva.example.net", Port: 862}, {Address: "ps-lyon.example.net", Port: 862}})
	if admits("198.18.2.2") || !admits("192.0.2.9") {
		t.Fatal("a new plan did not replace the old peers, or lost a name's addresses")
	}
	resolver.mu.Lock()
	delete(resolver.answers, "ps-geneva.example.net")
	resolver.mu.Unlock()
	eventually(t, "a new name was not looked up", func() bool { return admits("192.0.2.20") })
	resolver.set("ps-lyon.example.net", "192.0.2.21")
	eventually(t, "a moved name was not followed", func() bool { return admits("192.0.2.21") && !admits("192.0.2.20") })
	if !admits("192.0.2.9") {
		t.Fatal("a failed look-up dropped the name's addresses")
	}

	s.Admit(nil)
	if admits("192.0.2.9") || admits("192.0.2.21") {
		t.Fatal("peers admitted without a plan")
	}
}

// A port another socket holds (or a privileged one without the capability) does not stop
// the agent: the reflector tries again until it has it.
func TestTheReflectorWaitsForItsPort(t *testing.T) {
	held, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := held.LocalAddr().(*net.UDPAddr).Port
	s := New(port, "127.0.0.1", 100, hostclock.For(true), quiet)
	s.MinBackoff, s.MaxBackoff = 20*time.Millisecond, 50*time.Millisecond
	started := make(chan net.Addr, 1)
	s.Ready = func(a net.Addr) { started <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	select {
	case <-started:
		t.Fatal("started on a port another socket holds")
	case <-time.After(100 * time.Millisecond):
	}
	held.Close()
	select {
	case a := <-started:
		if a.(*net.UDPAddr).Port != port {
			t.Fatalf("listening on %v, want port %d", a, port)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not take the port once it was free")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
