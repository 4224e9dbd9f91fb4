package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-net/fathom/agents/internal/result"
)

// Limits on what the parser keeps, so hostile or broken output cannot make it allocate
// without bound: traceroute allows at most 255 hops and 10 probes per hop (the result
// contract takes 16).
const (
	maxTTL          = 255
	maxProbesPerHop = 16
)

// ErrNoHeader is returned for output without traceroute's "traceroute to" line.
var ErrNoHeader = errors.New("not traceroute output: no \"traceroute to\" header")

// Parsed is one traceroute run.
type Parsed struct {
	// Destination is the address traceroute resolved the target to (from its header).
	Destination string
	MaxHops     int
	PacketBytes int
	Hops        []result.TraceHop
	// Reached is true when the last hop answered from the destination's address.
	Reached bool
}

var (
	header  = regexp.MustCompile(`^traceroute to (\S+) \(([^)]*)\), (\d+) hops max, (\d+) byte packets`)
	hopLine = regexp.MustCompile(`^\s*(\d+)(?:\s+(.*))?$`)
	flag    = regexp.MustCompile(`^!(?:[HNPSXVC]|F(?:-\d+)?|\d+)$`)
	// --mtu's "F=1500" after a time: the path MTU from this hop on.
	mtuNote = regexp.MustCompile(`^F=(\d{1,5})$`)
)

// The path MTUs a hop may report: IPv4's minimum (RFC 791) to the largest IP packet.
const (
	minMTU = 68
	maxMTU = 65535
)

// Parse reads the output of Debian traceroute 2.1 (LC_ALL=C, with or without -n). Per hop
// line it takes each probe as "*" or a time "X ms", attaching the time to the last address
// printed on the line: traceroute prints an address only when it differs from the previous
// probe's, so a hop line holding several addresses is several routers (ECMP, or a route
// change) at one TTL. A flag (!H, !N, !X, !F-1500, !<code>...) belongs to the time before
// it; --mtu's "F=N" sets the hop's MTU. A line that does not start with a hop number
// continues the previous hop (wrapped
// output). Anything else on a line (hostnames, MPLS labels, AS numbers) is skipped.
func Parse(output []byte) (Parsed, error) {
	p := Parsed{Hops: []result.TraceHop{}}
	seenHeader := false
	var current *result.TraceHop
	var address *string // last address printed on the current hop line
	scanner := bufio.NewScanner(bytes.NewReader(output))
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := strings.TrimRight(scanner.Text(), "\r")
		if !seenHeader {
			if m := header.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				seenHeader = true
				p.Destination = m[2]
				p.MaxHops, _ = bounded(m[3], maxTTL)
				p.PacketBytes, _ = bounded(m[4], 65535)
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		rest := line
		if m := hopLine.FindStringSubmatch(line); m != nil {
			ttl, ok := bounded(m[1], maxTTL)
			if !ok || ttl == 0 {
				current = nil
				continue
			}
			switch {
			case current != nil && ttl == current.TTL:
				// the same hop again: keep adding to it
			case current == nil && len(p.Hops) > 0 && ttl <= p.Hops[len(p.Hops)-1].TTL,
				current != nil && ttl < current.TTL:
				current = nil // out of order: not a line traceroute writes
				continue
			default:
				p.Hops = append(p.Hops, result.TraceHop{TTL: ttl, Probes: []result.TraceProbe{}})
				current = &p.Hops[len(p.Hops)-1]
				address = nil
			}
			rest = m[2]
		} else if current == nil {
			continue // text between the header and the first hop (warnings)
		}
		address = readProbes(current, strings.Fields(rest), address)
	}
	if !seenHeader {
		return Parsed{}, ErrNoHeader
	}
	if n := len(p.Hops); n > 0 && p.Destination != "" {
		for _, probe := range p.Hops[n-1].Probes {
			if probe.Address != nil && sameAddress(*probe.Address, p.Destination) {
				p.Reached = true
			}
		}
	}
	return p, nil
}

// readProbes adds the probes in tokens to hop and returns the last address seen.
func readProbes(hop *result.TraceHop, tokens []string, address *string) *string {
	for i := 0; i < len(tokens); i++ {
		token := tokens[i]
		switch {
		case token == "*":
			if len(hop.Probes) < maxProbesPerHop {
				hop.Probes = append(hop.Probes, result.TraceProbe{})
			}
		case i+1 < len(tokens) && tokens[i+1] == "ms" && isTime(token):
			rtt, _ := strconv.ParseFloat(token, 64)
			i++
			// traceroute prints an address before the first time of a line; a time
			// without one belongs to no router and is not kept.
			if address != nil && len(hop.Probes) < maxProbesPerHop {
				hop.Probes = append(hop.Probes, result.TraceProbe{Address: address, RTTMs: &rtt})
			}
		case mtuNote.MatchString(token):
			if mtu, err := strconv.Atoi(token[2:]); err == nil && mtu >= minMTU && mtu <= maxMTU &&
				(hop.MTU == nil || mtu < *hop.MTU) {
				hop.MTU = &mtu
			}
		case flag.MatchString(token):
			if n := len(hop.Probes); n > 0 && hop.Probes[n-1].RTTMs != nil && hop.Probes[n-1].Flag == "" {
				hop.Probes[n-1].Flag = token
			}
		case strings.HasPrefix(token, "(") && strings.HasSuffix(token, ")"):
			// "host (address)" without -n: the address is in the parentheses.
			if a, ok := addressOf(token[1 : len(token)-1]); ok {
				address = &a
			}
		default:
			if a, ok := addressOf(token); ok {
				address = &a
			}
		}
	}
	return address
}

// isTime accepts traceroute's "%.3f" times: digits, one dot, digits, and nothing odd
// (ParseFloat alone would take "NaN", "Inf" or "1e308").
func isTime(s string) bool {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || whole == "" || frac == "" || len(s) > 16 {
		return false
	}
	for _, part := range []string{whole, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

func addressOf(s string) (string, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", false
	}
	return a.String(), true
}

func sameAddress(a, b string) bool {
	x, errX := netip.ParseAddr(a)
	y, errY := netip.ParseAddr(b)
	if errX != nil || errY != nil {
		return a == b
	}
	return x.Unmap() == y.Unmap()
}

func bounded(s string, limit int) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > limit {
		return 0, false
	}
	return n, true
}

// Fingerprint names a path: the first 16 hex digits of the SHA-256 of its hops in TTL
// order, one line per hop holding the hop's addresses sorted and joined by "|", or "*" for
// a hop that did not answer. Flows that took the same routers have the same fingerprint.
func Fingerprint(hops []result.TraceHop) string {
	var text strings.Builder
	for _, hop := range hops {
		var addresses []string
		for _, probe := range hop.Probes {
			if probe.Address != nil && !slices.Contains(addresses, *probe.Address) {
				addresses = append(addresses, *probe.Address)
			}
		}
		slices.Sort(addresses)
		if len(addresses) == 0 {
			addresses = []string{"*"}
		}
		text.WriteString(strings.Join(addresses, "|"))
		text.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(text.String()))
	return hex.EncodeToString(sum[:])[:16]
}
