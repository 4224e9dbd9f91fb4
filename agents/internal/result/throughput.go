package result

// Throughput is one iperf3 run: the options asked for, what the kernel granted, every
// interval of every stream and the end summary. TCP_INFO values iperf3 did not report
// (UDP, the receiving side, or 3.12's huge unsigned placeholders) are nil, never invented.
type Throughput struct {
	Options       ThroughputOptions `json:"options"`
	Iperf3Version string            `json:"iperf3_version"`
	Protocol      string            `json:"protocol"` // "TCP" or "UDP"
	Reverse       bool              `json:"reverse"`
	Streams       int               `json:"streams"`
	DurationS     int               `json:"duration_s"`
	OmitS         int               `json:"omit_s"`
	// Socket buffers as the kernel granted them (-w is doubled and capped by rmem_max/wmem_max).
	SndbufActual *int64 `json:"sndbuf_actual"`
	RcvbufActual *int64 `json:"rcvbuf_actual"`
	// Congestion control of each end, when iperf3 reports it (TCP only).
	SenderCongestion   string               `json:"sender_congestion"`
	ReceiverCongestion string               `json:"receiver_congestion"`
	Intervals          []ThroughputInterval `json:"intervals"`
	Summary            ThroughputSummary    `json:"summary"`
	StreamSummaries    []ThroughputSummary  `json:"stream_summaries"`
	// Ramp is a policer's UDP ramp step by step (options.ramp_bps); nil for an ordinary run.
	Ramp []RampStep `json:"ramp,omitempty"`
}

// ThroughputOptions are the test options the run used (the plan's spec with defaults filled
// in), so analysis knows the window asked for, the stream count and the pacing.
type ThroughputOptions struct {
	DurationS   int    `json:"duration_s"`
	OmitS       int    `json:"omit_s"`
	Parallel    int    `json:"parallel"`
	WindowBytes int    `json:"window_bytes"`
	Reverse     bool   `json:"reverse"`
	UDP         bool   `json:"udp"`
	BitrateBps  int64  `json:"bitrate_bps"`
	Congestion  string `json:"congestion"`
	MSS         int    `json:"mss"`
	FQRateBps   int64  `json:"fq_rate_bps"`
	// RampBps is the offered rate of each step of a UDP ramp; omitted for an ordinary run,
	// whose options stay as they were before ramps.
	RampBps []int64 `json:"ramp_bps,omitempty"`
	// StreamsProbe marks a run of several streams the server planned as a probe beside the
	// path's single-stream runs; omitted for an ordinary run.
	StreamsProbe bool `json:"streams_probe,omitempty"`
}

// ThroughputInterval is one reporting interval of one stream: the client's own, and in a reverse
// run whose server sent its output, also the server's as sender (Sender true, with TCP_INFO).
type ThroughputInterval struct {
	Stream      int      `json:"stream"`
	StartS      float64  `json:"start_s"`
	EndS        float64  `json:"end_s"`
	Bytes       int64    `json:"bytes"`
	BitsPerS    float64  `json:"bits_per_s"`
	Omitted     bool     `json:"omitted"`
	Sender      bool     `json:"sender"`
	Retransmits *int64   `json:"retransmits"`
	SndCwnd     *int64   `json:"snd_cwnd"`
	SndWnd      *int64   `json:"snd_wnd"`
	RTTUs       *int64   `json:"rtt_us"`
	RTTVarUs    *int64   `json:"rttvar_us"`
	PMTU        *int64   `json:"pmtu"`
	Packets     *int64   `json:"packets"`
	JitterMs    *float64 `json:"jitter_ms"`
	LostPackets *int64   `json:"lost_packets"`
}

// ThroughputSummary is the end of a run, whole or per stream (slow start omitted).
type ThroughputSummary struct {
	SenderBitsPerS   float64  `json:"sender_bits_per_s"`
	ReceiverBitsPerS float64  `json:"receiver_bits_per_s"`
	SenderBytes      int64    `json:"sender_bytes"`
	ReceiverBytes    int64    `json:"receiver_bytes"`
	Retransmits      *int64   `json:"retransmits"`
	MinRTTUs         *int64   `json:"min_rtt_us"`
	MeanRTTUs        *int64   `json:"mean_rtt_us"`
	MaxRTTUs         *int64   `json:"max_rtt_us"`
	MaxSndCwnd       *int64   `json:"max_snd_cwnd"`
	MaxSndWnd        *int64   `json:"max_snd_wnd"`
	HostCPUPercent   *float64 `json:"host_cpu_percent"`
	RemoteCPUPercent *float64 `json:"remote_cpu_percent"`
	JitterMs         *float64 `json:"jitter_ms"`
	LostPackets      *int64   `json:"lost_packets"`
	Packets          *int64   `json:"packets"`
	LostPercent      *float64 `json:"lost_percent"`
}

// RampStep is one step of a UDP ramp: the rate offered and what iperf3 reported of the
// step's own run, so the rate where loss begins (a policer's) can be read off the steps.
type RampStep struct {
	OfferedBps int64 `json:"offered_bps"`
	// StartedS is the step's first interval on the run's time line (see Throughput.Intervals).
	StartedS         float64  `json:"started_s"`
	DurationS        float64  `json:"duration_s"` // the step's measured (not omitted) seconds
	SenderBitsPerS   float64  `json:"sender_bits_per_s"`
	ReceiverBitsPerS float64  `json:"receiver_bits_per_s"`
	Packets          int64    `json:"packets"`
	LostPackets      int64    `json:"lost_packets"`
	LostPercent      float64  `json:"lost_percent"`
	JitterMs         *float64 `json:"jitter_ms"`
}
