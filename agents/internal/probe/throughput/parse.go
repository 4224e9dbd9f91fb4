// Package throughput runs iperf3 against a peer agent's iperf3 server and turns its JSON
// into a measurement: every interval of every stream, the end summary, the socket buffers
// and congestion control actually used, and iperf3's own error when the test did not run.
// A reverse TCP run also carries the sending server's TCP_INFO when the server's own JSON
// came back with it (--get-server-output).
package throughput

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fathom-net/fathom/agents/internal/result"
)

// RunError is iperf3's own account of a test that did not run, with a short class a NOC
// can group on: refused, busy, timeout, unreachable, peer gone or other.
type RunError struct {
	Class   string
	Message string
}

func (e *RunError) Error() string { return fmt.Sprintf("iperf3 %s: %s", e.Class, e.Message) }

// ErrNotIperf3JSON is returned for output that is not an iperf3 -J document.
var ErrNotIperf3JSON = errors.New("not iperf3 JSON output")

// Parse reads iperf3 -J output. A document carrying iperf3's "error" returns a *RunError
// and, when the run broke off after it had begun (killed, interrupted, the server gone),
// the intervals iperf3 printed until then: a partial measurement for a failed result to
// carry. A run that never began returns no intervals.
func Parse(data []byte) (result.Throughput, error) {
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return result.Throughput{}, fmt.Errorf("%w: %v", ErrNotIperf3JSON, err)
	}
	// iperf3 reports a test that did not run, or broke off, in "error", sometimes with no
	// "start" section at all; it is checked first because exit codes with -J lie (3.12).
	if doc.Error != "" {
		partial, err := measurement(doc, nil)
		if err != nil || len(partial.Intervals) == 0 {
			partial = result.Throughput{}
		}
		return partial, classify(doc.Error)
	}
	return measurement(doc, sendingServer(data, doc))
}

// measurement is the run a document describes, whole or up to where it broke off, with
// the sending server's account of a reverse run when there is one.
func measurement(doc document, server *serverSide) (result.Throughput, error) {
	if doc.Start == nil {
		return result.Throughput{}, fmt.Errorf("%w: no \"start\" section", ErrNotIperf3JSON)
	}
	out := result.Throughput{
		Iperf3Version:      strings.TrimPrefix(doc.Start.Version, "iperf "),
		Protocol:           doc.Start.TestStart.Protocol,
		Reverse:            doc.Start.TestStart.Reverse != 0,
		Streams:            doc.Start.TestStart.NumStreams,
		DurationS:          doc.Start.TestStart.Duration,
		OmitS:              doc.Start.TestStart.Omit,
		SndbufActual:       counter(doc.Start.SndbufActual),
		RcvbufActual:       counter(doc.Start.RcvbufActual),
		SenderCongestion:   doc.End.SenderTCPCongestion,
		ReceiverCongestion: doc.End.ReceiverTCPCongestion,
		Intervals:          []result.ThroughputInterval{},
		StreamSummaries:    []result.ThroughputSummary{},
	}
	if out.Protocol != "TCP" && out.Protocol != "UDP" {
		return result.Throughput{}, fmt.Errorf("%w: protocol %q", ErrNotIperf3JSON, out.Protocol)
	}
	for _, iv := range doc.Intervals {
		for _, s := range iv.Streams {
			if s.End < s.Start {
				continue // iperf3's clock reset after the omitted seconds (see backwards)
			}
			// iperf3 before 3.7 prints no "sender" flag: the client sends unless reversed.
			sender := !out.Reverse
			if s.Sender != nil {
				sender = *s.Sender
			}
			out.Intervals = append(out.Intervals, interval(s, s.Socket, sender))
		}
	}
	if server != nil && len(out.Intervals)+len(server.intervals) <= maxIntervals {
		out.Intervals = append(out.Intervals, server.intervals...)
	}
	cpu := doc.End.CPUUtilizationPercent
	for i, s := range doc.End.Streams {
		summary := streamSummary(s)
		if server != nil {
			summary = withSenderInfo(summary, server.streams[i])
		}
		out.StreamSummaries = append(out.StreamSummaries, summary)
	}
	out.Summary = totals(doc, out.StreamSummaries)
	if server != nil {
		out.Summary.Retransmits = orElse(out.Summary.Retransmits, server.retransmits)
		if out.SenderCongestion == "" {
			out.SenderCongestion = server.congestion
		}
	}
	if cpu != nil {
		out.Summary.HostCPUPercent, out.Summary.RemoteCPUPercent = finite(cpu.HostTotal), finite(cpu.RemoteTotal)
	}
	return out, nil
}

// backwards: when the omitted seconds end, iperf3 (3.12, seen with -P 4 on a loaded host)
// restarts its clock and may print one interval per stream that ends a fraction of a
// millisecond before it starts (start 1.000445, end 1.000213), its bytes a few hundred.
// It is no measured time; sent on, it made the server refuse the whole run (a CI run's
// streams probe, 2026-12-04), so it is left out.

// interval is one stream's row of one reporting interval, under the client's stream id.
func interval(s intervalStream, stream int, sender bool) result.ThroughputInterval {
	return result.ThroughputInterval{
		Stream: stream, StartS: s.Start, EndS: s.End, Bytes: byteCount(s.Bytes), BitsPerS: rate(s.BitsPerSecond),
		Omitted: s.Omitted, Sender: sender,
		Retransmits: counter(s.Retransmits), SndCwnd: positive(s.SndCwnd), SndWnd: positive(s.SndWnd),
		RTTUs: positive(s.RTT), RTTVarUs: counter(s.RTTVar), PMTU: positive(s.PMTU),
		Packets: counter(s.Packets), JitterMs: finite(s.JitterMs), LostPackets: counter(s.LostPackets),
	}
}

func streamSummary(s endStream) result.ThroughputSummary {
	sum := result.ThroughputSummary{}
	if s.Sender != nil {
		sum.SenderBitsPerS, sum.SenderBytes = rate(s.Sender.BitsPerSecond), byteCount(s.Sender.Bytes)
		sum.Retransmits = counter(s.Sender.Retransmits)
		sum.MinRTTUs, sum.MeanRTTUs, sum.MaxRTTUs = positive(s.Sender.MinRTT), positive(s.Sender.MeanRTT), positive(s.Sender.MaxRTT)
		sum.MaxSndCwnd, sum.MaxSndWnd = positive(s.Sender.MaxSndCwnd), positive(s.Sender.MaxSndWnd)
	}
	if s.Receiver != nil {
		sum.ReceiverBitsPerS, sum.ReceiverBytes = rate(s.Receiver.BitsPerSecond), byteCount(s.Receiver.Bytes)
	}
	if s.UDP != nil {
		sum.SenderBitsPerS, sum.SenderBytes = rate(s.UDP.BitsPerSecond), byteCount(s.UDP.Bytes)
		sum.JitterMs, sum.LostPackets = finite(s.UDP.JitterMs), counter(s.UDP.LostPackets)
		sum.Packets, sum.LostPercent = counter(s.UDP.Packets), finite(s.UDP.LostPercent)
		// No version prints a UDP stream's received side.
		sum.ReceiverBitsPerS, sum.ReceiverBytes = delivered(*s.UDP, sum.Packets, sum.LostPackets)
	}
	return sum
}

// MaxIntervals is the most interval rows a run may carry (the contract's intervals
// maxItems): one per stream and second of the longest run, its omitted seconds and a last
// partial one included.
const MaxIntervals = (MaxDurationS + MaxOmitS + 1) * MaxParallel

// maxIntervals is MaxIntervals, lowered by tests.
var maxIntervals = MaxIntervals

// serverSide is what the sending server's own JSON adds to a reverse TCP run: its rows, with
// TCP_INFO, under the client's stream ids; its end summaries by the index of the client's end
// stream they describe; its retransmits and congestion control.
type serverSide struct {
	intervals   []result.ThroughputInterval
	streams     map[int]result.ThroughputSummary
	retransmits *int64
	congestion  string
}

// sendingServer is the server's account of a reverse TCP run: the "server_output_json" that
// --get-server-output adds when the server itself runs with -J (a server without -J sends
// "server_output_text", which has no RTT, and is not read). A server part that is missing,
// malformed, an error, of another test or not matched to the client's streams is nil: the
// client's document then reads as if the server had said nothing.
func sendingServer(data []byte, doc document) *serverSide {
	if doc.Start == nil || doc.Start.TestStart.Protocol != "TCP" || doc.Start.TestStart.Reverse == 0 || len(doc.ServerOutputJSON) == 0 {
		return nil
	}
	var server document
	var clientIDs, serverIDs streamIDs
	if json.Unmarshal(doc.ServerOutputJSON, &server) != nil || json.Unmarshal(doc.ServerOutputJSON, &serverIDs) != nil ||
		json.Unmarshal(data, &clientIDs) != nil {
		return nil
	}
	if server.Error != "" || server.Start == nil || server.Start.TestStart.Protocol != "TCP" || len(server.Intervals) == 0 {
		return nil
	}
	if cookie := serverIDs.Start.Cookie; cookie != "" && clientIDs.Start.Cookie != "" && cookie != clientIDs.Start.Cookie {
		return nil
	}
	ids := sameStreams(clientIDs.Start.Connected, serverIDs.Start.Connected)
	if ids == nil {
		return nil
	}
	out := &serverSide{streams: map[int]result.ThroughputSummary{}, congestion: server.End.SenderTCPCongestion}
	for _, iv := range server.Intervals {
		for _, s := range iv.Streams {
			id, ok := ids[s.Socket]
			if !ok {
				return nil
			}
			if s.End < s.Start {
				continue // as in the client's intervals
			}
			// The server sends in a reverse run; before 3.7 it says so with no flag.
			if s.Sender == nil || *s.Sender {
				out.intervals = append(out.intervals, interval(s, id, true))
			}
		}
	}
	if len(out.intervals) == 0 {
		return nil
	}
	clientStream := map[int]int{} // the client's stream id -> its index in the client's end streams
	for i, s := range clientIDs.End.Streams {
		if id := s.socket(); id != nil {
			clientStream[*id] = i
		}
	}
	for j, s := range server.End.Streams {
		if j >= len(serverIDs.End.Streams) {
			break // both read the same array; a guard, not a case
		}
		if socket := serverIDs.End.Streams[j].socket(); socket != nil {
			if id, ok := ids[*socket]; ok {
				if i, ok := clientStream[id]; ok {
					out.streams[i] = streamSummary(s)
				}
			}
		}
	}
	if server.End.SumSent != nil {
		out.retransmits = counter(server.End.SumSent.Retransmits)
	}
	return out
}

// sameStreams maps the server's socket of each stream to the client's. A stream is one
// connection, whose remote port at the server is the client's local port, unless a NAT
// between them changed it; then the order tells, as the client connects its streams one
// after another and the server accepts them in that order. nil: the two do not match.
func sameStreams(client, server []connection) map[int]int {
	if len(client) == 0 || len(client) != len(server) {
		return nil
	}
	byPort := make(map[int]int, len(client))
	for _, c := range client {
		byPort[c.LocalPort] = c.Socket
	}
	ids := make(map[int]int, len(server))
	for _, s := range server {
		if id, ok := byPort[s.RemotePort]; ok {
			ids[s.Socket] = id
		}
	}
	if len(ids) != len(server) {
		clear(ids)
		for i, s := range server {
			ids[s.Socket] = client[i].Socket
		}
	}
	distinct := map[int]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	if len(ids) != len(server) || len(distinct) != len(ids) {
		return nil // the same socket twice: a damaged document
	}
	return ids
}

// withSenderInfo fills in what the client of a reverse run does not know of the sending
// side from the server's summary of the same stream: TCP_INFO, and retransmits if missing.
func withSenderInfo(sum, server result.ThroughputSummary) result.ThroughputSummary {
	sum.Retransmits = orElse(sum.Retransmits, server.Retransmits)
	sum.MinRTTUs, sum.MeanRTTUs = orElse(sum.MinRTTUs, server.MinRTTUs), orElse(sum.MeanRTTUs, server.MeanRTTUs)
	sum.MaxRTTUs = orElse(sum.MaxRTTUs, server.MaxRTTUs)
	sum.MaxSndCwnd, sum.MaxSndWnd = orElse(sum.MaxSndCwnd, server.MaxSndCwnd), orElse(sum.MaxSndWnd, server.MaxSndWnd)
	return sum
}

func orElse(v, fallback *int64) *int64 {
	if v == nil {
		return fallback
	}
	return v
}

// delivered is what reached the receiver of a UDP run reported only as sent, with the
// receiver's count of lost datagrams: iperf3 sends datagrams of one size, so the received
// share of the bytes is the received share of the packets.
func delivered(sent endSide, packets, lost *int64) (float64, int64) {
	if packets == nil || lost == nil || *packets <= 0 || *lost > *packets {
		return 0, 0
	}
	share := float64(*packets-*lost) / float64(*packets)
	return rate(sent.BitsPerSecond * share), byteCount(sent.Bytes * share)
}

// totals takes iperf3's own sums, and the largest RTT and window figures over the streams.
func totals(doc document, streams []result.ThroughputSummary) result.ThroughputSummary {
	sum := result.ThroughputSummary{}
	if doc.End.SumSent != nil {
		sum.SenderBitsPerS, sum.SenderBytes = rate(doc.End.SumSent.BitsPerSecond), byteCount(doc.End.SumSent.Bytes)
		sum.Retransmits = counter(doc.End.SumSent.Retransmits)
	}
	if doc.End.SumReceived != nil {
		sum.ReceiverBitsPerS, sum.ReceiverBytes = rate(doc.End.SumReceived.BitsPerSecond), byteCount(doc.End.SumReceived.Bytes)
	}
	if doc.End.Sum != nil && doc.Start.TestStart.Protocol == "UDP" {
		sum.JitterMs, sum.LostPackets = finite(doc.End.Sum.JitterMs), counter(doc.End.Sum.LostPackets)
		sum.Packets, sum.LostPercent = counter(doc.End.Sum.Packets), finite(doc.End.Sum.LostPercent)
		// Before 3.11 a UDP run's totals are only here: what was sent (bytes, rate) and the
		// receiver's loss. sum_sent and sum_received, where present, are the better figures.
		if doc.End.SumSent == nil {
			sum.SenderBitsPerS, sum.SenderBytes = rate(doc.End.Sum.BitsPerSecond), byteCount(doc.End.Sum.Bytes)
		}
		if doc.End.SumReceived == nil {
			sum.ReceiverBitsPerS, sum.ReceiverBytes = delivered(*doc.End.Sum, sum.Packets, sum.LostPackets)
		}
	}
	var meanTotal, means int64
	for _, s := range streams {
		sum.MinRTTUs = minPtr(sum.MinRTTUs, s.MinRTTUs)
		sum.MaxRTTUs = maxPtr(sum.MaxRTTUs, s.MaxRTTUs)
		if s.MeanRTTUs != nil {
			meanTotal, means = meanTotal+*s.MeanRTTUs, means+1
		}
		sum.MaxSndCwnd = maxPtr(sum.MaxSndCwnd, s.MaxSndCwnd)
		sum.MaxSndWnd = maxPtr(sum.MaxSndWnd, s.MaxSndWnd)
	}
	if means > 0 {
		mean := meanTotal / means
		sum.MeanRTTUs = &mean
	}
	return sum
}

func classify(message string) *RunError {
	lower := strings.ToLower(message)
	class := "other"
	switch {
	case strings.Contains(lower, "refused"):
		class = "refused"
	case strings.Contains(lower, "busy"):
		class = "busy"
	case strings.Contains(lower, "timed out") || strings.Contains(lower, "timeout"):
		class = "timeout"
	case strings.Contains(lower, "no route") || strings.Contains(lower, "unreachable"):
		class = "unreachable"
	case strings.Contains(lower, "reset by peer") || strings.Contains(lower, "control socket has closed") ||
		strings.Contains(lower, "server has terminated") || strings.Contains(lower, "broken pipe"):
		class = "peer gone"
	case strings.HasPrefix(lower, "interrupt"):
		// "interrupt - the client has terminated": iperf3 got SIGTERM, SIGINT or SIGHUP.
		class = "interrupted"
	}
	return &RunError{Class: class, Message: truncate(message, 300)}
}
