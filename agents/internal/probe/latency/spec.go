package latency

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/fathom-net/fathom/agents/internal/probe"
)

// Spec is a latency test's options, as the plan sends them.
type Spec struct {
	PacketIntervalS float64 `json:"packet_interval_s"`
	PacketTimeoutS  float64 `json:"packet_timeout_s"`
	SizeBytes       int     `json:"size_bytes"`
	DSCP            int     `json:"dscp"`
	Port            int     `json:"port"`
	ReportIntervalS int     `json:"report_interval_s"`
}

// DefaultSpec follows perfSONAR's latencybg: 10 packets a second, a result a minute.
func DefaultSpec() Spec {
	return Spec{PacketIntervalS: 0.1, PacketTimeoutS: 2, SizeBytes: 41, DSCP: 0, Port: 862, ReportIntervalS: 60}
}

// DecodeSpec reads a plan's spec over the defaults, refusing unknown fields, and validates it.
func DecodeSpec(raw json.RawMessage) (Spec, error) {
	spec := DefaultSpec()
	if err := probe.DecodeSpec(raw, &spec); err != nil {
		return spec, err
	}
	return spec, spec.Validate()
}

// Validate refuses options outside the contract, and an interval too short to send in.
func (s Spec) Validate() error {
	switch {
	case math.IsNaN(s.PacketIntervalS) || s.PacketIntervalS < 0.01 || s.PacketIntervalS > 1:
		return fmt.Errorf("packet_interval_s %g out of range 0.01..1", s.PacketIntervalS)
	case math.IsNaN(s.PacketTimeoutS) || s.PacketTimeoutS < 0.1 || s.PacketTimeoutS > 10:
		return fmt.Errorf("packet_timeout_s %g out of range 0.1..10", s.PacketTimeoutS)
	case s.SizeBytes < 41 || s.SizeBytes > 1472:
		return fmt.Errorf("size_bytes %d out of range 41..1472", s.SizeBytes)
	case s.DSCP < 0 || s.DSCP > 63:
		return fmt.Errorf("dscp %d out of range 0..63", s.DSCP)
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("port %d out of range 1..65535", s.Port)
	case s.ReportIntervalS < 10 || s.ReportIntervalS > 3600:
		return fmt.Errorf("report_interval_s %d out of range 10..3600", s.ReportIntervalS)
	case s.Packets() < 1:
		return fmt.Errorf("report_interval_s %d leaves no packet: it must exceed packet_timeout_s %g by packet_interval_s %g at least",
			s.ReportIntervalS, s.PacketTimeoutS, s.PacketIntervalS)
	}
	return nil
}

// Packets is how many packets an interval sends: one every packet interval, the last a
// packet timeout before the interval ends, so that its answer is in before the next
// interval's first packet leaves. The default sends floor((60 - 2) / 0.1) = 580.
func (s Spec) Packets() int {
	// A hair over the quotient: 58 / 0.1 is 579.99... in binary.
	return int(math.Floor((float64(s.ReportIntervalS)-s.PacketTimeoutS)/s.PacketIntervalS + 1e-9))
}

func (s Spec) packetInterval() time.Duration { return seconds(s.PacketIntervalS) }
func (s Spec) packetTimeout() time.Duration  { return seconds(s.PacketTimeoutS) }
func (s Spec) reportInterval() time.Duration { return time.Duration(s.ReportIntervalS) * time.Second }

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
