// Package topo turns a scenario into network namespaces, TUN devices, addresses, routes and
// sysctls, and removes all of it again. Every name carries the run's prefix.
package topo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"time"

	"github.com/fathom-net/fathom/agents/internal/lab/emu"
	"github.com/fathom-net/fathom/agents/internal/lab/scenario"
)

// PrefixPattern is what every lab name starts with: "fl" and four hex digits.
const prefixLen = 6

// NewPrefix returns a fresh per-run prefix such as "fl3a9c".
func NewPrefix() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return "fl" + hex.EncodeToString(b[:])
}

// HostAddr is host i's address (on its loopback): 198.18.0.(i+1).
func HostAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 18, 0, byte(i + 1)}) }

// HostAddr6 is host i's IPv6 address (on its loopback, when one of its links carries
// IPv6): 2001:2::(i+1) in RFC 5180's benchmarking block.
func HostAddr6(i int) netip.Addr {
	addr := netip.MustParseAddr("2001:2::").As16()
	addr[14], addr[15] = byte((i+1)>>8), byte(i+1)
	return netip.AddrFrom16(addr)
}

// linkAddrs are the two ends of link j's point-to-point /30 in 198.18.1.0 onwards.
func linkAddrs(j int) (netip.Addr, netip.Addr) {
	third, fourth := byte(1+j/64), byte(4*(j%64))
	return netip.AddrFrom4([4]byte{198, 18, third, fourth + 1}), netip.AddrFrom4([4]byte{198, 18, third, fourth + 2})
}

// Namespace is the netns name of a host.
func Namespace(prefix, host string) string { return prefix + "-" + host }

// tunName is the device of link j on side ("a" or "b"); at most 15 bytes.
func tunName(prefix string, j int, side string) string {
	return fmt.Sprintf("%sl%d%s", prefix, j, side)
}

// DefaultQueueBytes is the drop-tail queue behind a rate limit when a scenario gives none.
const DefaultQueueBytes = 4 << 20

// Params converts a scenario direction into emulator parameters.
func Params(d scenario.Direction) emu.Params {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var p emu.Params
	if d.DelayMs != nil {
		p.Delay = ms(*d.DelayMs)
	}
	if d.JitterMs != nil {
		p.Jitter = ms(*d.JitterMs)
	}
	if d.Reorder != nil {
		p.Reorder = *d.Reorder
	}
	if d.Loss != nil {
		p.Loss = *d.Loss
	}
	if g := d.Gilbert; g != nil {
		p.GEEnterBad, p.GELeaveBad, p.GELossGood, p.GELossBad = g.PEnterBad, g.PLeaveBad, g.LossGood, 1
		if g.LossBad != nil {
			p.GELossBad = *g.LossBad
		}
	}
	if d.RateMbps != nil {
		p.RateBps = *d.RateMbps * 1e6
		p.QueueBytes = DefaultQueueBytes
		if d.QueueByte != nil {
			p.QueueBytes = *d.QueueByte
		}
	}
	if pol := d.Policer; pol != nil {
		p.PolicerBps, p.PolicerBurst = pol.RateMbps*1e6, pol.BurstBytes
	}
	for _, m := range d.ECMP {
		p.Members = append(p.Members, emu.Member{Delay: ms(m.DelayMs), Weight: m.Weight})
	}
	return p
}

// LinkParams are link j's two directions (a->b, b->a) with each ECMP member's router.
func LinkParams(l scenario.Link, j int) [2]emu.Params {
	routers := l.Routers(j)
	params := [2]emu.Params{Params(l.Forward()), Params(l.Reverse())}
	for d := range params {
		for m := range params[d].Members {
			params[d].Members[m].Router = routers[d][m]
			if l.Carries(scenario.IPv6) {
				params[d].Members[m].Router6 = scenario.Router6(routers[d][m])
			}
		}
	}
	return params
}
