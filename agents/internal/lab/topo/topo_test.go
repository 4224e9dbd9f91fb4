package topo

import (
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/lab/emu"
	"github.com/fathom-net/fathom/agents/internal/lab/scenario"
)

func TestAddressesStayInTheBenchmarkingRange(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < scenario.MaxHosts; i++ {
		a := HostAddr(i)
		if !strings.HasPrefix(a.String(), "198.18.0.") || seen[a.String()] {
			t.Fatalf("host %d: %v", i, a)
		}
		seen[a.String()] = true
	}
	for j := 0; j < scenario.MaxLinks; j++ {
		a, b := linkAddrs(j)
		addrs := []string{a.String(), b.String()}
		for m := 0; m < scenario.MaxMembers; m++ {
			addrs = append(addrs, scenario.AutoRouter(j, 0, m).String(), scenario.AutoRouter(j, 1, m).String())
		}
		for _, addr := range addrs {
			if !strings.HasPrefix(addr, "198.18.") || seen[addr] {
				t.Fatalf("link %d: %s reused or outside 198.18.0.0/15", j, addr)
			}
			seen[addr] = true
		}
	}
	if name := tunName("flabcd", 199, "b"); len(name) > 15 {
		t.Fatalf("%q is too long for an interface name", name)
	}
	if p := NewPrefix(); len(p) != prefixLen || !strings.HasPrefix(p, "fl") {
		t.Fatalf("prefix %q", p)
	}
}

func TestParamsFromAScenarioDirection(t *testing.T) {
	s, err := scenario.Parse("t.yaml", []byte(`name: t
hosts: [{name: a}, {name: b}]
links:
  - name: ab
    between: [a, b]
    both: {delay_ms: 10.5, jitter_ms: 0.2, rate_mbps: 100}
    b_to_a:
      gilbert_elliott: {p_enter_bad: 0.01, p_leave_bad: 0.3}
      policer: {rate_mbps: 90, burst_bytes: 8000}
`))
	if err != nil {
		t.Fatal(err)
	}
	fwd, rev := Params(s.Links[0].Forward()), Params(s.Links[0].Reverse())
	if fwd.Delay != 10500*time.Microsecond || fwd.Jitter != 200*time.Microsecond || fwd.RateBps != 100e6 || fwd.QueueBytes != DefaultQueueBytes {
		t.Fatalf("forward %+v", fwd)
	}
	if rev.GELossBad != 1 || rev.GELeaveBad != 0.3 || rev.PolicerBps != 90e6 || rev.PolicerBurst != 8000 {
		t.Fatalf("reverse %+v", rev)
	}
}

func TestECMPMembersGetTheirRouters(t *testing.T) {
	s, err := scenario.Parse("t.yaml", []byte(`name: t
hosts: [{name: a}, {name: b}, {name: c}]
links:
  - {name: one, between: [a, b], both: {delay_ms: 1}}
  - name: two
    between: [c, a]
    a_to_b: {ecmp: [{delay_ms: 1}, {delay_ms: 2, router: 198.18.200.7}]}
    b_to_a: {delay_ms: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	params := LinkParams(s.Links[1], 1)
	members := params[0].Members
	if len(members) != 2 || members[0].Router.String() != "198.18.128.33" || members[1].Router.String() != "198.18.200.7" {
		t.Fatalf("a->b members %+v: want link 1's first automatic router and the named one", members)
	}
	if len(params[1].Members) != 0 || params[1].Delay != time.Millisecond {
		t.Fatalf("b->a %+v: no ECMP, so no router", params[1])
	}
	if members[0].Router6.IsValid() {
		t.Fatal("a link that carries no IPv6 gives its routers no IPv6 address")
	}
	s.Links[1].Families = []string{scenario.IPv4, scenario.IPv6}
	members = LinkParams(s.Links[1], 1)[0].Members
	if members[0].Router6.String() != "2001:2:0:1::c612:8021" || members[1].Router6.String() != "2001:2:0:1::c612:c807" {
		t.Fatalf("IPv6 routers %v, %v: want the IPv4 routers embedded in 2001:2:0:1::/96", members[0].Router6, members[1].Router6)
	}
}

func TestIPv6HostAddressesStayInTheBenchmarkingBlock(t *testing.T) {
	block := netip.MustParsePrefix("2001:2::/48")
	seen := map[netip.Addr]bool{}
	for i := 0; i < scenario.MaxHosts; i++ {
		a := HostAddr6(i)
		if !block.Contains(a) || seen[a] {
			t.Fatalf("host %d: %v reused or outside 2001:2::/48", i, a)
		}
		seen[a] = true
	}
	if HostAddr6(0).String() != "2001:2::1" || HostAddr6(199).String() != "2001:2::c8" {
		t.Fatalf("hosts 0 and 199 are %v and %v", HostAddr6(0), HostAddr6(199))
	}
}

func testLab() *Lab {
	return &Lab{
		State: &State{},
		Directions: map[string][2]*emu.Direction{
			"wan": {emu.NewDirection(emu.Params{Delay: 10 * time.Millisecond}, 1), emu.NewDirection(emu.Params{Delay: 10 * time.Millisecond}, 2)},
			"mp":  {emu.NewDirection(emu.Params{Members: []emu.Member{{Delay: 1}, {Delay: 2}}}, 3), emu.NewDirection(emu.Params{}, 4)},
		},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func TestSetChangesOneOrBothDirections(t *testing.T) {
	lab := testLab()
	if err := lab.Set("wan", map[string]string{"delay_ms": "30", "a_to_b.loss": "0.01"}); err != nil {
		t.Fatal(err)
	}
	fwd, rev := lab.Directions["wan"][0].Params(), lab.Directions["wan"][1].Params()
	if fwd.Delay != 30*time.Millisecond || rev.Delay != 30*time.Millisecond || fwd.Loss != 0.01 || rev.Loss != 0 {
		t.Fatalf("forward %+v reverse %+v", fwd, rev)
	}
}

func TestBadSetRequestsChangeNothing(t *testing.T) {
	cases := map[string]struct {
		link   string
		values map[string]string
		want   string
	}{
		"unknown link":   {"nope", map[string]string{"delay_ms": "1"}, `no link named "nope"`},
		"unknown key":    {"wan", map[string]string{"delay_ms": "5", "latency": "1"}, "unknown key"},
		"negative":       {"wan", map[string]string{"delay_ms": "-1"}, "not a non-negative number"},
		"not a number":   {"wan", map[string]string{"loss": "lots"}, "not a non-negative number"},
		"loss above one": {"wan", map[string]string{"delay_ms": "5", "loss": "2"}, "not a probability"},
		"bad direction":  {"wan", map[string]string{"up.loss": "0.1"}, "a_to_b or b_to_a"},
		"ECMP delay":     {"mp", map[string]string{"a_to_b.delay_ms": "5"}, "ECMP members"},
		"nothing":        {"wan", map[string]string{}, "nothing to set"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lab := testLab()
			err := lab.Set(tc.link, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if d := lab.Directions["wan"][0].Params().Delay; d != 10*time.Millisecond {
				t.Fatalf("a refused request changed the delay to %v", d)
			}
		})
	}
}

func TestControlSocketRoundTrip(t *testing.T) {
	lab := testLab()
	dir := t.TempDir()
	listener, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	go lab.Serve(listener)
	if _, err := Call(dir, Request{Op: "set", Link: "wan", Values: map[string]string{"jitter_ms": "1"}}); err != nil {
		t.Fatal(err)
	}
	reply, err := Call(dir, Request{Op: "stats"})
	if err != nil || len(reply.Stats) != 4 || reply.Stats[0].Link != "mp" {
		t.Fatalf("stats %+v %v", reply, err)
	}
	if _, err := Call(dir, Request{Op: "explode"}); err == nil || !strings.Contains(err.Error(), "unknown op") {
		t.Fatalf("unknown op: %v", err)
	}
	if _, err := Call(t.TempDir(), Request{Op: "stats"}); err == nil || !strings.Contains(err.Error(), "no lab answers") {
		t.Fatalf("no lab: %v", err)
	}
}
