package scenario

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

const valid = `name: t
hosts:
  - name: a
    sysctls:
      net.ipv4.tcp_rmem: "4096 131072 6291456"
    congestion_control: cubic
  - name: b
links:
  - name: ab
    between: [a, b]
    both:
      delay_ms: 10
      jitter_ms: 0.1
    a_to_b:
      loss: 0.01
      rate_mbps: 100
      queue_bytes: 50000
    b_to_a:
      ecmp:
        - {delay_ms: 3.9, weight: 3}
        - {delay_ms: 8, weight: 1}
`

func TestParseValidScenarioAndMergeDirections(t *testing.T) {
	s, err := Parse("t.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	fwd, rev := s.Links[0].Forward(), s.Links[0].Reverse()
	if *fwd.DelayMs != 10 || *fwd.Loss != 0.01 || *fwd.JitterMs != 0.1 || *fwd.RateMbps != 100 {
		t.Fatalf("a_to_b must override both field by field: %+v", fwd)
	}
	if rev.DelayMs != nil || len(rev.ECMP) != 2 || *rev.JitterMs != 0.1 || rev.Loss != nil {
		t.Fatalf("b_to_a with ECMP drops the shared delay: %+v", rev)
	}
	if s.Links[0].LinkMTU() != 9000 || s.HostIndex("b") != 1 || s.HostIndex("z") != -1 {
		t.Fatal("defaults or host lookup wrong")
	}
}

func TestBadScenariosAreRefusedWithTheirLine(t *testing.T) {
	cases := map[string]struct{ edit, want string }{
		"unknown key": {
			strings.Replace(valid, "      delay_ms: 10", "      delay: 10", 1), "line 12: field delay not found"},
		"negative delay": {
			strings.Replace(valid, "delay_ms: 10", "delay_ms: -1", 1), "t.yaml:12: links[0].both.delay_ms: -1 out of range"},
		"loss above one": {
			strings.Replace(valid, "loss: 0.01", "loss: 1.5", 1), "t.yaml:15: links[0].a_to_b.loss: 1.5 is not a probability"},
		"missing host": {
			strings.Replace(valid, "between: [a, b]", "between: [a, c]", 1), `t.yaml:10: links[0].between[1]: no host named "c"`},
		"duplicate host": {
			strings.Replace(valid, "  - name: b\n", "  - name: a\n", 1), `hosts[1].name: host "a" is defined twice`},
		"global sysctl in a namespace": {
			strings.Replace(valid, "net.ipv4.tcp_rmem", "net.core.rmem_max", 1), "is global on Linux"},
		"queue without rate": {
			strings.Replace(valid, "      rate_mbps: 100\n", "", 1), "a queue needs rate_mbps"},
		"single ECMP member": {
			strings.Replace(valid, "        - {delay_ms: 8, weight: 1}\n", "", 1), "one member is not multipath"},
		"bad name": {
			strings.Replace(valid, "name: t", "name: T!", 1), `t.yaml:1: name: "T!" must be`},
		"long host name": {
			strings.Replace(valid, "  - name: b\n", "  - name: frankfurtmain\n", 1), "must be 1-10 lower-case"},
		"not yaml": {"hosts: [", "t.yaml: "},
		"self link": {
			strings.Replace(valid, "between: [a, b]", "between: [a, a]", 1), "a link joins two different hosts"},
		"bad mtu": {
			strings.Replace(valid, "    between: [a, b]\n", "    between: [a, b]\n    mtu: 100\n", 1), "links[0].mtu: 100 out of range"},
		"unknown member key": {
			strings.Replace(valid, "weight: 1}", "weight: 1, routr: 198.18.200.1}", 1), "line 21: field routr not found"},
		"router not an address": {
			withRouters("nope", ""), `t.yaml:20: links[0].b_to_a.ecmp[0].router: "nope" is not an IPv4 address`},
		"router outside the lab": {
			withRouters("10.0.0.1", ""), "t.yaml:20: links[0].b_to_a.ecmp[0].router: 10.0.0.1 is outside the lab's 198.18.0.0/15"},
		"router on a host address": {
			withRouters("", "198.18.0.2"), "t.yaml:21: links[0].b_to_a.ecmp[1].router: 198.18.0.2 is in 198.18.0.0/17"},
		"router on the management bridge": {
			withRouters("198.19.0.1", ""), "198.19.0.1 is in 198.19.0.0/24"},
		"one router for two members": {
			withRouters("198.18.200.1", "198.18.200.1"), "links[0].b_to_a.ecmp[1].router: 198.18.200.1 is also ecmp[0]'s router"},
		"router taken automatically": {
			withRouters("", "198.18.128.17"), "198.18.128.17 is the automatic router address of links[0].b_to_a.ecmp[0]"},
		"unknown family": {
			strings.Replace(valid, "    between: [a, b]\n", "    between: [a, b]\n    families: [ipv4, inet6]\n", 1), `links[0].families[1]: "inet6" is not a family`},
		"family twice": {
			strings.Replace(valid, "    between: [a, b]\n", "    between: [a, b]\n    families: [ipv6, ipv6]\n", 1), "links[0].families[1]: ipv6 is listed twice"},
		"no family": {
			strings.Replace(valid, "    between: [a, b]\n", "    between: [a, b]\n    families: []\n", 1), "links[0].families: a link carries ipv4, ipv6 or both"},
		"second route for one family": {
			valid + "  - name: again\n    between: [b, a]\n    families: [ipv6, ipv4]\n    both: {delay_ms: 5}\n", "links[1].between: a and b are already linked for ipv4"},
		"too many members": {
			strings.Replace(valid, "        - {delay_ms: 8, weight: 1}\n", strings.Repeat("        - {delay_ms: 8, weight: 1}\n", 15), 1), "links[0].b_to_a.ecmp: 16 members, at most 15"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAPairCanTakeOneLinkPerFamily(t *testing.T) {
	dual := valid + "  - name: six\n    between: [b, a]\n    families: [ipv6]\n    both: {delay_ms: 15}\n"
	s, err := Parse("t.yaml", []byte(dual))
	if err != nil {
		t.Fatal(err)
	}
	plain, six := s.Links[0], s.Links[1]
	if !plain.Carries(IPv4) || plain.Carries(IPv6) || six.Carries(IPv4) || !six.Carries(IPv6) {
		t.Fatal("a link without families carries IPv4 only; families: [ipv6] carries IPv6 only")
	}
	if !s.HasIPv6(0) || !s.HasIPv6(1) {
		t.Fatal("both ends of an IPv6 link have an IPv6 address")
	}
	ipv4Only, _ := Parse("t.yaml", []byte(valid))
	if ipv4Only.HasIPv6(0) {
		t.Fatal("a host without IPv6 links has no IPv6 address")
	}
}

func TestRouter6EmbedsTheIPv4Router(t *testing.T) {
	got := Router6(netip.MustParseAddr("198.18.128.1"))
	if got.String() != "2001:2:0:1::c612:8001" || !netip.MustParsePrefix("2001:2::/48").Contains(got) {
		t.Fatalf("Router6(198.18.128.1) = %s", got)
	}
}

// withRouters names the routers of valid's two b_to_a members ("" leaves one unnamed).
func withRouters(first, second string) string {
	named := func(member, router string) string {
		if router == "" {
			return member + "}"
		}
		return fmt.Sprintf("%s, router: %q}", member, router)
	}
	out := strings.Replace(valid, "{delay_ms: 3.9, weight: 3}", named("{delay_ms: 3.9, weight: 3", first), 1)
	return strings.Replace(out, "{delay_ms: 8, weight: 1}", named("{delay_ms: 8, weight: 1", second), 1)
}

func TestRoutersAreNamedOrAutomatic(t *testing.T) {
	s, err := Parse("t.yaml", []byte(withRouters("198.18.200.1", "")))
	if err != nil {
		t.Fatal(err)
	}
	routers := s.Links[0].Routers(0)
	want := []netip.Addr{netip.MustParseAddr("198.18.200.1"), netip.MustParseAddr("198.18.128.18")}
	if len(routers[0]) != 0 || len(routers[1]) != 2 || routers[1][0] != want[0] || routers[1][1] != want[1] {
		t.Fatalf("routers %v, want none a->b and %v b->a", routers, want)
	}
	shared := `name: t
hosts: [{name: a}, {name: b}]
links:
  - name: ab
    between: [a, b]
    both: {ecmp: [{delay_ms: 1, router: 198.18.200.1}, {delay_ms: 2, router: 198.18.200.2}]}
`
	if _, err := Parse("t.yaml", []byte(shared)); err != nil {
		t.Fatalf("both directions of a link may share their routers: %v", err)
	}
}

func TestAutomaticRoutersAreDistinctAndInTheirBlock(t *testing.T) {
	seen := map[netip.Addr]bool{}
	for j := 0; j < MaxLinks; j++ {
		for d := 0; d < 2; d++ {
			for m := 0; m < MaxMembers; m++ {
				addr := AutoRouter(j, d, m)
				if !autoRouters.Contains(addr) || seen[addr] {
					t.Fatalf("link %d direction %d member %d: %v reused or outside %v", j, d, m, addr, autoRouters)
				}
				seen[addr] = true
			}
		}
	}
}

func TestShippedScenariosAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../../../deploy/lab/scenarios/*.yaml")
	if len(files) == 0 {
		t.Fatal("no scenarios found in deploy/lab/scenarios")
	}
	for _, file := range files {
		s, err := Load(file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if s.Seed == "" || s.Scaling == "" || s.Description == "" {
			t.Errorf("%s must say its seed, its scaling and what it is", file)
		}
		if want := strings.TrimSuffix(filepath.Base(file), ".yaml"); s.Name != want {
			t.Errorf("%s is named %q", file, s.Name)
		}
	}
}
