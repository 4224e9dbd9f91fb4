package result

// Latency is one report interval of a TWAMP-light session: what was sent, what each
// direction lost, and the delay each way. Sent = Answered + Forward.Lost + Backward.Lost.
type Latency struct {
	PacketIntervalS float64          `json:"packet_interval_s"`
	SizeBytes       int              `json:"size_bytes"`
	DSCP            int              `json:"dscp"`
	Port            int              `json:"port"`
	Sent            int              `json:"sent"`
	Answered        int              `json:"answered"`
	Duplicates      int              `json:"duplicates"`
	Malformed       int              `json:"malformed"`
	Forward         LatencyDirection `json:"forward"`
	Backward        LatencyDirection `json:"backward"`
	// RoundTrip is both ways with the reflector's own time taken out.
	RoundTrip   LatencyDelays `json:"round_trip"`
	SenderClock LatencyClock  `json:"sender_clock"`
	// ReflectorClock is nil when no answer came back to declare it.
	ReflectorClock *LatencyClock `json:"reflector_clock"`
}

// LatencyDirection is one way of the path: sender to reflector (forward) or back.
type LatencyDirection struct {
	Lost int `json:"lost"`
	// ReorderedFraction is RFC 4737's reordered ratio; nil when no packet arrived.
	ReorderedFraction *float64      `json:"reordered_fraction"`
	Delay             LatencyDelays `json:"delay"`
	// IPDVMs is RFC 3393's delay variation; nil when no two consecutive packets arrived.
	IPDVMs *float64 `json:"ipdv_ms"`
	// Hops is 255 minus the TTL the packets arrived with; nil where it could not be read.
	Hops *int `json:"hops"`
}

// LatencyDelays are delays in milliseconds, all nil when no packet arrived.
type LatencyDelays struct {
	MinMs *float64 `json:"min_ms"`
	P50Ms *float64 `json:"p50_ms"`
	P90Ms *float64 `json:"p90_ms"`
	P99Ms *float64 `json:"p99_ms"`
	MaxMs *float64 `json:"max_ms"`
}

// LatencyClock is a host's clock as its TWAMP packets declare it (RFC 4656's Error Estimate).
type LatencyClock struct {
	Synchronized bool    `json:"synchronized"`
	ErrorMs      float64 `json:"error_ms"`
}
