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
	"net/netip"
	"os"
	"regexp"
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
	// Families are the address families the link carries: ipv4 (the default), ipv6 or
	// both. Two links may join one pair if they carry different families, so a dual-stack
	// pair can take one route for IPv4 and another for IPv6.
	Families []string `yaml:"families"`
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

// Address families a link can carry.
const (
	IPv4 = "ipv4"
	IPv6 = "ipv6"
)

// Carries says whether the link carries family (IPv4 or IPv6); a link that names no
// families carries IPv4 only, as every link did before IPv6.
func (l Link) Carries(family string) bool {
	if len(l.Families) == 0 {
		return family == IPv4
	}
	for _, f := range l.Families {
		if f == family {
			return true
		}
	}
	return false
}

// HasIPv6 says whether host i has an IPv6 address: whether any of its links carries IPv6.
func (s *Scenario) HasIPv6(i int) bool {
	for _, l := range s.Links {
		if l.Carries(IPv6) && (s.HostIndex(l.Between[0]) == i || s.HostIndex(l.Between[1]) == i) {
			return true
		}
	}
	return false
}

// routers6 is where ECMP routers' IPv6 addresses live: RFC 5180's benchmarking block
// 2001:2::/48, the /96 that embeds the router's IPv4 address in its last 32 bits.
var routers6 = netip.MustParsePrefix("2001:2:0:1::/96")

// Router6 is the IPv6 address of the router whose IPv4 address is v4: 2001:2:0:1:: with
// v4 in its last 32 bits (198.18.128.1 is 2001:2:0:1::c612:8001), so a member is one
// router in both families and traceroute's hops read alike.
func Router6(v4 netip.Addr) netip.Addr {
	addr := routers6.Addr().As16()
	low := v4.As4()
	copy(addr[12:], low[:])
	return netip.AddrFrom16(addr)
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
