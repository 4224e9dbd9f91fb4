package scenario

// A scenario's checks before anything is created: ranges, sysctls, routers and combinations
// a link cannot have, each with the path it is about.

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
)

func (s *Scenario) validate() []problem {
	var out []problem
	add := func(path, format string, args ...any) { out = append(out, problem{path, fmt.Sprintf(format, args...)}) }
	if !regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`).MatchString(s.Name) {
		add("name", "%q must be 1-40 lower-case letters, digits or dashes", s.Name)
	}
	if len(s.Hosts) < 2 || len(s.Hosts) > MaxHosts {
		add("hosts", "a scenario needs 2..%d hosts, has %d", MaxHosts, len(s.Hosts))
	}
	if len(s.Links) > MaxLinks {
		add("links", "%d links, at most %d", len(s.Links), MaxLinks)
	}
	for key := range s.RootSysctls {
		if !sysctlPattern.MatchString(key) {
			add("root_sysctls."+key, "not a net.ipv4.* or net.core.* sysctl")
		}
	}
	hosts := map[string]bool{}
	for i, h := range s.Hosts {
		path := fmt.Sprintf("hosts[%d]", i)
		if !namePattern.MatchString(h.Name) {
			add(path+".name", "%q must be 1-10 lower-case letters or digits, starting with a letter", h.Name)
		}
		if hosts[h.Name] {
			add(path+".name", "host %q is defined twice", h.Name)
		}
		hosts[h.Name] = true
		for key := range h.Sysctls {
			if !sysctlPattern.MatchString(key) {
				add(path+".sysctls."+key, "not a net.ipv4.* or net.core.* sysctl")
			}
			if GlobalSysctls[key] {
				add(path+".sysctls."+key, "is global on Linux, not per namespace: set it in root_sysctls or use iperf3 -w")
			}
		}
	}
	automatic := s.automaticRouters()
	links := map[string]bool{}
	pairs := map[[3]string]bool{} // the two hosts and a family
	for i, l := range s.Links {
		path := fmt.Sprintf("links[%d]", i)
		if !namePattern.MatchString(l.Name) {
			add(path+".name", "%q must be 1-10 lower-case letters or digits, starting with a letter", l.Name)
		}
		if links[l.Name] {
			add(path+".name", "link %q is defined twice", l.Name)
		}
		links[l.Name] = true
		for j, end := range l.Between {
			if !hosts[end] {
				add(fmt.Sprintf("%s.between[%d]", path, j), "no host named %q", end)
			}
		}
		if l.Between[0] == l.Between[1] {
			add(path+".between", "a link joins two different hosts")
		}
		pair := l.Between
		if pair[0] > pair[1] {
			pair[0], pair[1] = pair[1], pair[0]
		}
		seen := map[string]bool{}
		for k, family := range l.Families {
			if family != IPv4 && family != IPv6 {
				add(fmt.Sprintf("%s.families[%d]", path, k), "%q is not a family: ipv4 or ipv6", family)
			}
			if seen[family] {
				add(fmt.Sprintf("%s.families[%d]", path, k), "%s is listed twice", family)
			}
			seen[family] = true
		}
		if l.Families != nil && len(l.Families) == 0 {
			add(path+".families", "a link carries ipv4, ipv6 or both")
		}
		for _, family := range []string{IPv4, IPv6} {
			key := [3]string{pair[0], pair[1], family}
			if !l.Carries(family) {
				continue
			}
			if pairs[key] {
				add(path+".between", "%s and %s are already linked for %s: one route per family", pair[0], pair[1], family)
			}
			pairs[key] = true
		}
		if l.MTU != 0 && (l.MTU < 576 || l.MTU > 65000) {
			add(path+".mtu", "%d out of range 576..65000", l.MTU)
		}
		// Values are checked where they are written; combinations on each merged direction.
		for _, section := range []struct {
			name string
			dir  *Direction
		}{{"both", &l.Both}, {"a_to_b", l.AToB}, {"b_to_a", l.BToA}} {
			if section.dir == nil {
				continue
			}
			for _, p := range section.dir.ranges() {
				add(path+"."+section.name+"."+p.path, "%s", p.msg)
			}
		}
		for d, dir := range [2]Direction{l.Forward(), l.Reverse()} {
			for _, p := range append(dir.combinations(), dir.routerClashes(automatic)...) {
				add(path+"."+directionKey[d]+"."+p.path, "%s", p.msg)
			}
		}
	}
	if len(s.Links) == 0 && len(s.Hosts) >= 2 {
		add("links", "a scenario needs at least one link")
	}
	return out
}

// GlobalSysctls are visible in a namespace but can be written only in the root namespace.
var GlobalSysctls = map[string]bool{
	"net.core.rmem_max":                       true,
	"net.core.wmem_max":                       true,
	"net.core.rmem_default":                   true,
	"net.core.wmem_default":                   true,
	"net.core.default_qdisc":                  true,
	"net.ipv4.tcp_allowed_congestion_control": true,
}

// ranges checks each value on its own.
func (d Direction) ranges() []problem {
	var out []problem
	add := func(path, format string, args ...any) { out = append(out, problem{path, fmt.Sprintf(format, args...)}) }
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if d.DelayMs != nil && (!finite(*d.DelayMs) || *d.DelayMs < 0 || *d.DelayMs > 10000) {
		add("delay_ms", "%v out of range 0..10000", *d.DelayMs)
	}
	if d.JitterMs != nil && (!finite(*d.JitterMs) || *d.JitterMs < 0 || *d.JitterMs > 1000) {
		add("jitter_ms", "%v out of range 0..1000", *d.JitterMs)
	}
	probability := func(path string, v float64) {
		if !finite(v) || v < 0 || v > 1 {
			add(path, "%v is not a probability (0..1)", v)
		}
	}
	if d.Loss != nil {
		probability("loss", *d.Loss)
	}
	if g := d.Gilbert; g != nil {
		probability("gilbert_elliott.p_enter_bad", g.PEnterBad)
		probability("gilbert_elliott.p_leave_bad", g.PLeaveBad)
		probability("gilbert_elliott.loss_good", g.LossGood)
		if g.LossBad != nil {
			probability("gilbert_elliott.loss_bad", *g.LossBad)
		}
		if g.PLeaveBad == 0 {
			add("gilbert_elliott.p_leave_bad", "0 would stay in the bad state forever")
		}
	}
	if d.RateMbps != nil && (!finite(*d.RateMbps) || *d.RateMbps <= 0 || *d.RateMbps > 100000) {
		add("rate_mbps", "%v out of range (0, 100000]", *d.RateMbps)
	}
	if d.QueueByte != nil && *d.QueueByte < 1500 {
		add("queue_bytes", "%d is below one packet (1500)", *d.QueueByte)
	}
	if p := d.Policer; p != nil {
		if !finite(p.RateMbps) || p.RateMbps <= 0 {
			add("policer.rate_mbps", "%v must be positive", p.RateMbps)
		}
		if p.BurstBytes < 1500 {
			add("policer.burst_bytes", "%d is below one packet (1500)", p.BurstBytes)
		}
	}
	for i, m := range d.ECMP {
		if !finite(m.DelayMs) || m.DelayMs < 0 || m.DelayMs > 10000 {
			add(fmt.Sprintf("ecmp[%d].delay_ms", i), "%v out of range 0..10000", m.DelayMs)
		}
		if m.Weight < 0 || m.Weight > 1000 {
			add(fmt.Sprintf("ecmp[%d].weight", i), "%d out of range 0..1000", m.Weight)
		}
		if m.Router != "" {
			if msg := routerProblem(m.Router); msg != "" {
				add(fmt.Sprintf("ecmp[%d].router", i), "%s", msg)
			}
		}
	}
	if len(d.ECMP) == 1 {
		add("ecmp", "one member is not multipath: use delay_ms")
	}
	if len(d.ECMP) > MaxMembers {
		add("ecmp", "%d members, at most %d (each is a router with an address of its own)", len(d.ECMP), MaxMembers)
	}
	return out
}

// routerProblem says what is wrong with a router address a scenario names, "" if nothing.
func routerProblem(router string) string {
	addr, err := netip.ParseAddr(router)
	if err != nil || !addr.Is4() {
		return fmt.Sprintf("%q is not an IPv4 address", router)
	}
	if !labRange.Contains(addr) {
		return fmt.Sprintf("%s is outside the lab's 198.18.0.0/15", addr)
	}
	for _, reserved := range labReserved {
		if reserved.Contains(addr) {
			return fmt.Sprintf("%s is in %s, which the lab gives to hosts, links or management", addr, reserved)
		}
	}
	return ""
}

// automaticRouters maps each automatic router address in use to the member it belongs to.
func (s *Scenario) automaticRouters() map[netip.Addr]string {
	out := map[netip.Addr]string{}
	for j, l := range s.Links {
		for d, dir := range [2]Direction{l.Forward(), l.Reverse()} {
			for m, member := range dir.ECMP {
				if member.Router == "" {
					out[AutoRouter(j, d, m)] = fmt.Sprintf("links[%d].%s.ecmp[%d]", j, directionKey[d], m)
				}
			}
		}
	}
	return out
}

// routerClashes refuses named routers that traceroute could not tell apart: two members of
// one direction with one address, or a member's address that is another's automatic one.
// Two directions or links may share a router, as they do in real networks.
func (d Direction) routerClashes(automatic map[netip.Addr]string) []problem {
	var out []problem
	named := map[netip.Addr]int{}
	for i, m := range d.ECMP {
		addr, err := netip.ParseAddr(m.Router)
		if err != nil {
			continue // unnamed, or refused by ranges
		}
		path := fmt.Sprintf("ecmp[%d].router", i)
		if owner, taken := automatic[addr]; taken {
			out = append(out, problem{path, fmt.Sprintf("%s is the automatic router address of %s", addr, owner)})
		}
		if first, seen := named[addr]; seen {
			out = append(out, problem{path, fmt.Sprintf("%s is also ecmp[%d]'s router: each member needs its own", addr, first)})
		} else {
			named[addr] = i
		}
	}
	return out
}

// combinations checks a merged direction's fields against each other.
func (d Direction) combinations() []problem {
	var out []problem
	if d.QueueByte != nil && d.RateMbps == nil {
		out = append(out, problem{"queue_bytes", "a queue needs rate_mbps (it fills only behind a rate limit)"})
	}
	if len(d.ECMP) > 0 && d.DelayMs != nil {
		out = append(out, problem{"ecmp", "give each member its delay_ms instead of the direction's delay_ms"})
	}
	return out
}
