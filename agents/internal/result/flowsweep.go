package result

import "time"

// FlowSweep is one flow-sweep round: many flows (distinct source ports, so an ECMP router
// hashes each onto its own member) each sampled several times, interleaved round-robin.
// Each sample keeps its flow, so analysis can tell modes that split by flow (ECMP) from
// modes that split by time (a route change or congestion).
type FlowSweep struct {
	Protocol       string            `json:"protocol"` // "udp" (echo responder) or "tcp" (handshake time)
	Port           int               `json:"port"`
	Flows          int               `json:"flows"`
	SamplesPerFlow int               `json:"samples_per_flow"`
	IntervalMs     float64           `json:"interval_ms"` // between consecutive probes of the round
	Samples        []FlowSweepSample `json:"samples"`
}

// FlowSweepSample is one probe of one flow: RTTMs nil means no answer in time.
type FlowSweepSample struct {
	Flow    int       `json:"flow"`
	SrcPort int       `json:"src_port"`
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`
	RTTMs   *float64  `json:"rtt_ms"`
	Error   string    `json:"error,omitempty"`
}
