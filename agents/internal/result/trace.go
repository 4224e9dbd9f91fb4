package result

// Trace is one trace run: the hop-by-hop path of each flow. Each flow has a fixed 5-tuple
// (its source port), so on an ECMP path different flows enumerate different members.
type Trace struct {
	Method  string      `json:"method"` // "udp", "tcp" or "icmp"
	DstPort int         `json:"dst_port"`
	MaxHops int         `json:"max_hops"`
	Flows   []TraceFlow `json:"flows"`
}

// TraceFlow is the path one flow took. Fingerprint is a digest of the responding hop
// addresses in order (unknown hops as "*"), so equal paths have equal fingerprints.
type TraceFlow struct {
	Flow        int        `json:"flow"`
	SrcPort     int        `json:"src_port"`
	Reached     bool       `json:"reached"`
	Fingerprint string     `json:"fingerprint"`
	Hops        []TraceHop `json:"hops"`
}

// TraceHop is one TTL: every probe sent with it. One hop can hold several addresses (ECMP
// below the flow's granularity, or load balancing per packet).
type TraceHop struct {
	TTL    int          `json:"ttl"`
	Probes []TraceProbe `json:"probes"`
	// MTU is the path MTU traceroute --mtu found at this hop: set on the hop where it
	// changed (the first hop shows the sender's own), nil on the hops after it.
	MTU *int `json:"mtu,omitempty"`
}

// TraceProbe is one probe's answer: Address nil and RTTMs nil for "*" (no reply). Flag is
// traceroute's annotation such as "!H", "!N", "!X" or "!<N>", empty when none.
type TraceProbe struct {
	Address *string  `json:"address"`
	RTTMs   *float64 `json:"rtt_ms"`
	Flag    string   `json:"flag,omitempty"`
}
