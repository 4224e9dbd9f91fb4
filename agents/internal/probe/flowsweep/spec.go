package flowsweep

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fathom-net/fathom/agents/internal/echo"
	"github.com/fathom-net/fathom/agents/internal/probe"
)

// Spec is a flow sweep's options, as the plan sends them.
type Spec struct {
	// Protocol is "udp" (echoes from the peer's responder) or "tcp" (handshake time to a
	// listening port: the responder's, or any other).
	Protocol string `json:"protocol"`
	// Port on the peer; 0 (what the server's normalised specs send for "default") means
	// the echo responder's port, which answers UDP echoes and completes TCP handshakes.
	Port           int `json:"port"`
	Flows          int `json:"flows"`
	SamplesPerFlow int `json:"samples_per_flow"`
	IntervalMs     int `json:"interval_ms"`
	TimeoutMs      int `json:"timeout_ms"`
}

// MaxRoundMs bounds one sweep (flows x samples x interval), so a plan cannot hold the probe
// for hours.
const MaxRoundMs = 600_000

// DefaultSpec sends 16 flows, Cloudprober's count, enough to see every member of ECMP groups
// of up to 4-8 links with high probability; 10 samples each, one probe every 20 ms (a
// 3.2 s round), and a sample unanswered after 1 s is lost. Port 0 is the echo responder's.
func DefaultSpec() Spec {
	return Spec{Protocol: "udp", Port: 0, Flows: 16, SamplesPerFlow: 10, IntervalMs: 20, TimeoutMs: 1000}
}

// DecodeSpec reads a plan's spec over the defaults, refusing unknown fields, and validates it.
func DecodeSpec(raw json.RawMessage) (Spec, error) {
	spec := DefaultSpec()
	if err := probe.DecodeSpec(raw, &spec); err != nil {
		return spec, err
	}
	if spec.Port == 0 {
		spec.Port = echo.DefaultPort
	}
	return spec, spec.Validate()
}

// Validate names the first option out of range.
func (s Spec) Validate() error {
	switch {
	case s.Protocol != "udp" && s.Protocol != "tcp":
		return fmt.Errorf("protocol %q is not udp or tcp", s.Protocol)
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("port %d out of range 1..65535", s.Port)
	case s.Flows < 2 || s.Flows > 64:
		return fmt.Errorf("flows %d out of range 2..64", s.Flows)
	case s.SamplesPerFlow < 1 || s.SamplesPerFlow > 100:
		return fmt.Errorf("samples_per_flow %d out of range 1..100", s.SamplesPerFlow)
	case s.IntervalMs < 1 || s.IntervalMs > 1000:
		return fmt.Errorf("interval_ms %d out of range 1..1000", s.IntervalMs)
	case s.TimeoutMs < 100 || s.TimeoutMs > 60000:
		return fmt.Errorf("timeout_ms %d out of range 100..60000", s.TimeoutMs)
	case s.Flows*s.SamplesPerFlow*s.IntervalMs > MaxRoundMs:
		return fmt.Errorf("flows x samples_per_flow x interval_ms = %d ms, over the %d ms a round may take",
			s.Flows*s.SamplesPerFlow*s.IntervalMs, MaxRoundMs)
	}
	return nil
}

func (s Spec) interval() time.Duration { return time.Duration(s.IntervalMs) * time.Millisecond }
func (s Spec) timeout() time.Duration  { return time.Duration(s.TimeoutMs) * time.Millisecond }
func (s Spec) probes() int             { return s.Flows * s.SamplesPerFlow }

// slot is the k-th probe of the round: round-robin over the flows, so consecutive probes
// of one flow are Flows x interval apart and every flow sees the same moments of the path.
func (s Spec) slot(k int) (flow, seq int) { return k % s.Flows, k / s.Flows }
