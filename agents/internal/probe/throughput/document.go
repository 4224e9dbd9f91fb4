package throughput

import "encoding/json"

// document is the part of iperf3 -J output that Fathom reads. Numbers are float64 so huge
// unsigned values decode instead of failing the whole document.
type document struct {
	Start *struct {
		Version      string   `json:"version"`
		SndbufActual *float64 `json:"sndbuf_actual"`
		RcvbufActual *float64 `json:"rcvbuf_actual"`
		TestStart    struct {
			Protocol   string `json:"protocol"`
			NumStreams int    `json:"num_streams"`
			Omit       int    `json:"omit"`
			Duration   int    `json:"duration"`
			Reverse    int    `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Streams []intervalStream `json:"streams"`
	} `json:"intervals"`
	End struct {
		Streams               []endStream `json:"streams"`
		Sum                   *endSide    `json:"sum"`
		SumSent               *endSide    `json:"sum_sent"`
		SumReceived           *endSide    `json:"sum_received"`
		CPUUtilizationPercent *struct {
			HostTotal   *float64 `json:"host_total"`
			RemoteTotal *float64 `json:"remote_total"`
		} `json:"cpu_utilization_percent"`
		SenderTCPCongestion   string `json:"sender_tcp_congestion"`
		ReceiverTCPCongestion string `json:"receiver_tcp_congestion"`
	} `json:"end"`
	Error string `json:"error"`
	// The server's own -J document (--get-server-output), read apart (sendingServer) so that
	// whatever it holds never fails the client's.
	ServerOutputJSON json.RawMessage `json:"server_output_json"`
}

// streamIDs is how a document names its streams: its connections, and the socket of each
// end summary. It is read apart from document, for the same reason.
type streamIDs struct {
	Start struct {
		Cookie    string       `json:"cookie"`
		Connected []connection `json:"connected"`
	} `json:"start"`
	End struct {
		Streams []endSockets `json:"streams"`
	} `json:"end"`
}

type endSockets struct {
	Sender *struct {
		Socket int `json:"socket"`
	} `json:"sender"`
	Receiver *struct {
		Socket int `json:"socket"`
	} `json:"receiver"`
}

// socket is the stream an end summary describes, nil if it does not say.
func (e endSockets) socket() *int {
	switch {
	case e.Sender != nil:
		return &e.Sender.Socket
	case e.Receiver != nil:
		return &e.Receiver.Socket
	}
	return nil
}

type connection struct {
	Socket     int `json:"socket"`
	LocalPort  int `json:"local_port"`
	RemotePort int `json:"remote_port"`
}

type intervalStream struct {
	Socket        int      `json:"socket"`
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	SndCwnd       *float64 `json:"snd_cwnd"`
	SndWnd        *float64 `json:"snd_wnd"`
	RTT           *float64 `json:"rtt"`
	RTTVar        *float64 `json:"rttvar"`
	PMTU          *float64 `json:"pmtu"`
	Packets       *float64 `json:"packets"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *float64 `json:"lost_packets"`
	Omitted       bool     `json:"omitted"`
	Sender        *bool    `json:"sender"`
}

type endStream struct {
	Sender   *endSide `json:"sender"`
	Receiver *endSide `json:"receiver"`
	UDP      *endSide `json:"udp"`
}

type endSide struct {
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	MaxSndCwnd    *float64 `json:"max_snd_cwnd"`
	MaxSndWnd     *float64 `json:"max_snd_wnd"`
	MaxRTT        *float64 `json:"max_rtt"`
	MinRTT        *float64 `json:"min_rtt"`
	MeanRTT       *float64 `json:"mean_rtt"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *float64 `json:"lost_packets"`
	Packets       *float64 `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
}
