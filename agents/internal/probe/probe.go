// Package probe defines what a probe is and which probes exist. A new probe type is one
// package plus one line in the registry (see registry.go).
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// Prober runs one test of its type and always returns a result: a run that could not be
// carried out is a failed result with its reason, never silence.
type Prober interface {
	Run(ctx context.Context, test plan.Test, planVersion string) result.Result
}

// Lasting is a prober that can tell how long a run of a test takes, so the scheduler can keep
// the run out of an exclusive test on its path. A spec it cannot read lasts 0 (unknown).
type Lasting interface {
	Lasts(test plan.Test) time.Duration
}

// Registry maps a test type to its prober.
type Registry map[string]Prober

// Lasts is the test's prober's estimate of a run's length, 0 where it has none.
func (r Registry) Lasts(test plan.Test) time.Duration {
	if lasting, ok := r[test.Type].(Lasting); ok {
		return lasting.Lasts(test)
	}
	return 0
}

// DecodeSpec reads a plan's spec over the defaults already in spec, refusing unknown fields
// and trailing data: a spec this agent does not fully understand is not run half-understood.
func DecodeSpec(raw json.RawMessage, spec any) error {
	if len(raw) == 0 {
		return nil
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(spec); err != nil {
		return err
	}
	if decoder.More() {
		return errors.New("trailing data after the spec")
	}
	return nil
}

// Target is a peer's address as the measuring tools take it, and its family: an IP literal
// loses the brackets of URL notation ("[2001:db8::1]" is "2001:db8::1", which ping,
// traceroute and iperf3 cannot resolve with them), an IPv4-mapped IPv6 address is the IPv4
// one, and a zone ("%eth0") stays. Family is 4 or 6 for a literal and 0 for a host name,
// which the tool resolves itself.
func Target(address string) (host string, family int) {
	literal := address
	if strings.HasPrefix(literal, "[") && strings.HasSuffix(literal, "]") {
		literal = literal[1 : len(literal)-1]
	}
	ip, err := netip.ParseAddr(literal)
	if err != nil {
		return address, 0
	}
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if ip.Is4() {
		return ip.String(), 4
	}
	return ip.String(), 6
}

// FamilyFlag is the -4 or -6 that pins ping, traceroute or iperf3 to a literal's family;
// empty for a host name.
func FamilyFlag(family int) []string {
	switch family {
	case 4:
		return []string{"-4"}
	case 6:
		return []string{"-6"}
	}
	return nil
}
