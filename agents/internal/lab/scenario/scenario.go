// Package scenario reads a lab scenario: hosts (network namespaces with their own TCP
// sysctls) and the links between them (per-direction delay, jitter, loss, rate, queue,
// policer, ECMP members that are router hops). Unknown keys and impossible values are
// refused with the line they are on, before anything is created.
package scenario

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Scenario is one lab topology.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Seed names the case study the scenario reproduces, and Scaling says what was scaled
	// down to fit user space (rates), and what was kept true (RTTs, buffers, loss).
	Seed    string `yaml:"seed"`
	Scaling string `yaml:"scaling"`
	// RootSysctls are global settings (net.core.rmem_max, wmem_max, the allowed congestion
	// controls) that a namespace cannot set; they are set in the root namespace while the
	// lab is up and restored afterwards.
	RootSysctls map[string]string `yaml:"root_sysctls"`
	Hosts       []Host            `yaml:"hosts"`
	Links       []Link            `yaml:"links"`
}

// Host is a network namespace.
type Host struct {
	Name string `yaml:"name"`
	// Sysctls set inside the namespace (only per-namespace ones: see docs/lab.md).
	Sysctls map[string]string `yaml:"sysctls"`
	// CongestionControl is the namespace's default (net.ipv4.tcp_congestion_control).
	CongestionControl string `yaml:"congestion_control"`
}

// Link joins two hosts with a point-to-point path emulated in user space.
type Link struct {
	Name    string    `yaml:"name"`
	Between [2]string `yaml:"between"`
	MTU     int       `yaml:"mtu"`
	// Both applies to each direction; AToB and BToA override it field by field.
	Both Direction  `yaml:"both"`
	AToB *Direction `yaml:"a_to_b"`
	BToA *Direction `yaml:"b_to_a"`
}

// Direction is what one direction of a link does to packets, in this order: policer,
// random loss, rate limit with a drop-tail queue, then delay (per ECMP member if any).
type Direction struct {
	DelayMs   *float64 `yaml:"delay_ms"`
	JitterMs  *float64 `yaml:"jitter_ms"`
	Reorder   *bool    `yaml:"reorder"`
	Loss      *float64 `yaml:"loss"`
	Gilbert   *Gilbert `yaml:"gilbert_elliott"`
	RateMbps  *float64 `yaml:"rate_mbps"`
	QueueByte *int     `yaml:"queue_bytes"`
	Policer   *Policer `yaml:"policer"`
	ECMP      []Member `yaml:"ecmp"`
}

// Gilbert is bursty loss: a two-state Markov chain (Gilbert-Elliott).
type Gilbert struct {
	PEnterBad float64  `yaml:"p_enter_bad"`
	PLeaveBad float64  `yaml:"p_leave_bad"`
	LossBad   *float64 `yaml:"loss_bad"`
	LossGood  float64  `yaml:"loss_good"`
}

// Policer drops what exceeds a token bucket (no queue), like a provider's rate limiter.
type Policer struct {
	RateMbps   float64 `yaml:"rate_mbps"`
	BurstBytes int     `yaml:"burst_bytes"`
}

// Member is one ECMP path of a direction: its own one-way delay, a weight, and the
// address of its router, the hop traceroute shows (AutoRouter's unless named).
type Member struct {
	DelayMs float64 `yaml:"delay_ms"`
	Weight  int     `yaml:"weight"`
	Router  string  `yaml:"router"`
}

// Error is a problem in the scenario file, with the line it is on when known.
type Error struct {
	File string
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes strictly (unknown keys are errors) and validates.
func Parse(file string, data []byte) (*Scenario, error) {
	var s Scenario
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	decoder.KnownFields(true)
	if err := decoder.Decode(&s); err != nil {
		return nil, &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	if problems := s.validate(); len(problems) > 0 {
		errs := make([]error, 0, len(problems))
		for _, p := range problems {
			errs = append(errs, &Error{File: file, Line: lineOf(&root, p.path), Path: p.path, Msg: p.msg})
		}
		return nil, errors.Join(errs...)
	}
	return &s, nil
}

type problem struct{ path, msg string }

var (
	namePattern   = regexp.MustCompile(`^[a-z][a-z0-9]{0,9}$`)
	sysctlPattern = regexp.MustCompile(`^net\.(ipv4|core)\.[a-z_]+$`)
)

// MaxHosts keeps host addresses inside 198.18.0.0/24, MaxLinks the link ends inside
// 198.18.0.0/17 and the automatic routers inside 198.18.128.0/17 (MaxMembers per direction).
const (
	MaxHosts   = 200
	MaxLinks   = 1024
	MaxMembers = 15
)

// The lab's addresses are RFC 2544's 198.18.0.0/15. Hosts and link ends (topo) take
// 198.18.0.0/17, the management bridge 198.19.0.0/24, the automatic ECMP routers
// 198.18.128.0/17; a router a scenario names may be any other address of the range.
var (
	labRange    = netip.MustParsePrefix("198.18.0.0/15")
	labReserved = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/17"), netip.MustParsePrefix("198.19.0.0/24")}
	autoRouters = netip.MustParsePrefix("198.18.128.0/17")
)

// directionKey names direction d (0 a->b, 1 b->a) as a scenario does.
var directionKey = [2]string{"a_to_b", "b_to_a"}

// AutoRouter is the router address of member m of link j's direction d (0 a->b, 1 b->a)
// when the scenario names none: each link has 32 addresses in 198.18.128.0/17, each
// direction 16, and member m is at m+1 of its direction's 16.
func AutoRouter(j, d, m int) netip.Addr {
	base := autoRouters.Addr().As4()
	var addr [4]byte
	binary.BigEndian.PutUint32(addr[:], binary.BigEndian.Uint32(base[:])+uint32(32*j+16*d+m+1))
	return netip.AddrFrom4(addr)
}

// Routers are the router addresses of link j's ECMP members, a->b then b->a: the ones the
// scenario names, else AutoRouter's.
func (l Link) Routers(j int) [2][]netip.Addr {
	var out [2][]netip.Addr
	for d, dir := range [2]Direction{l.Forward(), l.Reverse()} {
		for m, member := range dir.ECMP {
			addr := AutoRouter(j, d, m)
			if member.Router != "" {
				addr, _ = netip.ParseAddr(member.Router) // checked by ranges
			}
			out[d] = append(out[d], addr)
		}
	}
	return out
}

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
	pairs := map[[2]string]bool{}
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
		if pairs[pair] {
			add(path+".between", "%s and %s are already linked", pair[0], pair[1])
		}
		pairs[pair] = true
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

// Forward is the a->b direction: Both overridden by AToB.
func (l Link) Forward() Direction { return merge(l.Both, l.AToB) }

// Reverse is the b->a direction: Both overridden by BToA.
func (l Link) Reverse() Direction { return merge(l.Both, l.BToA) }

func merge(base Direction, override *Direction) Direction {
	if override == nil {
		return base
	}
	out := base
	if override.DelayMs != nil {
		out.DelayMs = override.DelayMs
	}
	if override.JitterMs != nil {
		out.JitterMs = override.JitterMs
	}
	if override.Reorder != nil {
		out.Reorder = override.Reorder
	}
	if override.Loss != nil {
		out.Loss = override.Loss
	}
	if override.Gilbert != nil {
		out.Gilbert = override.Gilbert
	}
	if override.RateMbps != nil {
		out.RateMbps = override.RateMbps
	}
	if override.QueueByte != nil {
		out.QueueByte = override.QueueByte
	}
	if override.Policer != nil {
		out.Policer = override.Policer
	}
	if override.ECMP != nil {
		out.ECMP = override.ECMP
		out.DelayMs = nil
	}
	return out
}

// LinkMTU is the link's MTU, 9000 unless set: large packets keep user space fast.
func (l Link) LinkMTU() int {
	if l.MTU == 0 {
		return 9000
	}
	return l.MTU
}

// HostIndex is the position of a host, which fixes its address.
func (s *Scenario) HostIndex(name string) int {
	for i, h := range s.Hosts {
		if h.Name == name {
			return i
		}
	}
	return -1
}

// lineOf finds the line of a path such as "links[2].a_to_b.loss" in the YAML tree; it
// falls back to the nearest ancestor that exists.
func lineOf(root *yaml.Node, path string) int {
	node := root
	if node.Kind == yaml.DocumentNode && len(node.Content) > 0 {
		node = node.Content[0]
	}
	line := node.Line
	for _, part := range splitPath(path) {
		next := child(node, part)
		if next == nil {
			break
		}
		node, line = next, next.Line
	}
	return line
}

func splitPath(path string) []string {
	var parts []string
	for _, dotted := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(dotted, "[")
		if name != "" {
			parts = append(parts, name)
		}
		for rest != "" {
			var index string
			index, rest, _ = strings.Cut(rest, "]")
			parts = append(parts, "["+index+"]")
			rest = strings.TrimPrefix(rest, "[")
		}
	}
	return parts
}

func child(node *yaml.Node, part string) *yaml.Node {
	if strings.HasPrefix(part, "[") {
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if node.Kind != yaml.SequenceNode || err != nil || i < 0 || i >= len(node.Content) {
			return nil
		}
		return node.Content[i]
	}
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == part {
			return node.Content[i+1]
		}
	}
	return nil
}
