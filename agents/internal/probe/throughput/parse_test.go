package throughput

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/contract"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func load(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseRealOutputs(t *testing.T) {
	cases := []struct {
		file      string
		protocol  string
		streams   int
		reverse   bool
		intervals int
		check     func(t *testing.T, o result.Throughput)
	}{
		{"tcp-single.json", "TCP", 1, false, 4, func(t *testing.T, o result.Throughput) {
			if o.Iperf3Version != "3.12" || o.OmitS != 1 || o.DurationS != 3 || o.SenderCongestion != "cubic" {
				t.Errorf("start: %+v", o)
			}
			if !o.Intervals[0].Omitted || o.Intervals[1].Omitted {
				t.Error("the first interval is the omitted slow start")
			}
			iv := o.Intervals[1]
			if iv.SndCwnd == nil || iv.SndWnd == nil || iv.RTTUs == nil || iv.PMTU == nil || iv.Retransmits == nil {
				t.Errorf("TCP_INFO fields missing: %+v", iv)
			}
			s := o.Summary
			if s.ReceiverBitsPerS <= 0 || s.MaxSndWnd == nil || s.MinRTTUs == nil || s.HostCPUPercent == nil || s.Retransmits == nil {
				t.Errorf("summary %+v", s)
			}
			if o.SndbufActual == nil || o.RcvbufActual == nil {
				t.Error("socket buffers missing")
			}
		}},
		{"tcp-parallel.json", "TCP", 2, false, 4, func(t *testing.T, o result.Throughput) {
			if len(o.StreamSummaries) != 2 || o.Intervals[0].Stream == o.Intervals[1].Stream {
				t.Errorf("per-stream data lost: %d summaries", len(o.StreamSummaries))
			}
			total := o.StreamSummaries[0].ReceiverBitsPerS + o.StreamSummaries[1].ReceiverBitsPerS
			if diff := total - o.Summary.ReceiverBitsPerS; diff > 0.01*total || diff < -0.01*total {
				t.Errorf("streams %.0f vs sum %.0f", total, o.Summary.ReceiverBitsPerS)
			}
		}},
		{"tcp-reverse.json", "TCP", 1, true, 2, func(t *testing.T, o result.Throughput) {
			// The client receives: it has no TCP_INFO of the sending side.
			if o.Intervals[0].Sender || o.Intervals[0].SndCwnd != nil || o.Summary.MaxSndWnd != nil {
				t.Errorf("reverse intervals claim sender data: %+v", o.Intervals[0])
			}
			if o.Summary.ReceiverBitsPerS <= 0 {
				t.Error("no receiver rate")
			}
		}},
		{"tcp-window-paced.json", "TCP", 1, false, 2, nil},
		{"udp.json", "UDP", 1, false, 2, func(t *testing.T, o result.Throughput) {
			s := o.Summary
			if s.Packets == nil || s.LostPackets == nil || s.JitterMs == nil || s.LostPercent == nil {
				t.Errorf("UDP summary %+v", s)
			}
			if o.Intervals[0].Packets == nil || o.Intervals[0].SndCwnd != nil {
				t.Errorf("UDP interval %+v", o.Intervals[0])
			}
		}},
		{"tcp-huge-unsigned.json", "TCP", 1, false, 4, func(t *testing.T, o result.Throughput) {
			if o.Intervals[1].SndWnd != nil || o.Intervals[1].RTTVarUs != nil {
				t.Errorf("2^32-1 and 2^64-1 must be missing: %+v", o.Intervals[1])
			}
			if o.Summary.MaxSndWnd != nil {
				t.Error("huge max_snd_wnd kept")
			}
			if o.Intervals[1].SndCwnd == nil {
				t.Error("a sane neighbour value was dropped")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			o, err := Parse(load(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if o.Protocol != tc.protocol || o.Streams != tc.streams || o.Reverse != tc.reverse || len(o.Intervals) < tc.intervals {
				t.Fatalf("protocol %s streams %d reverse %v intervals %d", o.Protocol, o.Streams, o.Reverse, len(o.Intervals))
			}
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

// Every version's layout gives the same measurement: rates both ways, per-stream data, and
// TCP_INFO only where the client sent. Files: testdata/README.md.
func TestParseAcrossVersions(t *testing.T) {
	cases := []struct {
		file     string
		version  string
		protocol string
		streams  int
		reverse  bool
	}{
		{"iperf3-3.1.3-tcp-single.json", "3.1.3", "TCP", 1, false},
		{"iperf3-3.1.3-tcp-reverse.json", "3.1.3", "TCP", 1, true},
		{"iperf3-3.1.3-udp-loss.json", "3.1.3", "UDP", 1, false},
		{"iperf3-3.7-tcp-parallel3.json", "3.7", "TCP", 3, false},
		{"iperf3-3.7-udp-reverse-loss.json", "3.7", "UDP", 1, true},
		{"iperf3-3.9-udp-loss.json", "3.9", "UDP", 1, false},
		{"iperf3-3.9-udp-parallel2.json", "3.9", "UDP", 2, false},
		{"iperf3-3.9-tcp-reverse-parallel2.json", "3.9", "TCP", 2, true},
		{"iperf3-3.12-tcp-single.json", "3.12", "TCP", 1, false},
		{"iperf3-3.12-tcp-parallel3.json", "3.12", "TCP", 3, false},
		{"iperf3-3.12-tcp-reverse.json", "3.12", "TCP", 1, true},
		{"iperf3-3.12-tcp-reverse-parallel2.json", "3.12", "TCP", 2, true},
		{"iperf3-3.12-tcp-ipv6.json", "3.12", "TCP", 1, false},
		{"iperf3-3.12-udp.json", "3.12", "UDP", 1, false},
		{"iperf3-3.12-udp-reverse.json", "3.12", "UDP", 1, true},
		{"iperf3-3.12-udp-parallel2.json", "3.12", "UDP", 2, false},
		{"iperf3-3.12-udp-loss.json", "3.12", "UDP", 1, false},
		{"iperf3-3.12-udp-reverse-loss.json", "3.12", "UDP", 1, true},
		{"iperf3-3.12-udp-ipv6-reverse.json", "3.12", "UDP", 1, true},
		{"iperf3-3.16-tcp-single.json", "3.16", "TCP", 1, false},
		{"iperf3-3.16-tcp-reverse.json", "3.16", "TCP", 1, true},
		{"iperf3-3.16-udp.json", "3.16", "UDP", 1, false},
		{"iperf3-3.17-tcp-parallel3.json", "3.17", "TCP", 3, false},
		{"iperf3-3.17-udp-reverse.json", "3.17", "UDP", 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			o, err := Parse(load(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if o.Iperf3Version != tc.version || o.Protocol != tc.protocol || o.Streams != tc.streams || o.Reverse != tc.reverse {
				t.Fatalf("version %q protocol %s streams %d reverse %v", o.Iperf3Version, o.Protocol, o.Streams, o.Reverse)
			}
			if o.Summary.SenderBitsPerS <= 0 || o.Summary.ReceiverBitsPerS <= 0 || len(o.StreamSummaries) != tc.streams {
				t.Fatalf("summary %+v, %d stream summaries", o.Summary, len(o.StreamSummaries))
			}
			if len(o.Intervals) < 2*tc.streams {
				t.Fatalf("%d intervals", len(o.Intervals))
			}
			for _, iv := range o.Intervals {
				// The client sends unless reversed: so say the intervals, in every version
				// (3.1 prints no "sender" flag), and TCP_INFO is the sender's only.
				if iv.Sender == tc.reverse || (tc.protocol == "TCP" && (iv.SndCwnd != nil) == tc.reverse) {
					t.Fatalf("interval %+v of a run with reverse=%v", iv, tc.reverse)
				}
			}
		})
	}
}

// iperf3 before 3.11 prints a UDP run's totals only in end.sum: bytes and rate sent, and the
// receiver's jitter and loss (sum_sent and sum_received came with 3.11).
func TestParseUDPOfVersionsWithOnlyEndSum(t *testing.T) {
	cases := []struct {
		file             string
		sentBytes        int64
		receivedBytes    int64 // sum_received of the 3.12 run the file was built from
		lostPackets      int64
		streams, reverse int
	}{
		{"iperf3-3.9-udp-loss.json", 1519406000, 1490329400, 20765, 1, 0},
		{"iperf3-3.1.3-udp-loss.json", 1519406000, 1490329400, 20765, 1, 0},
		{"iperf3-3.7-udp-reverse-loss.json", 1512686000, 1489114200, 16823, 1, 1},
		{"iperf3-3.9-udp-parallel2.json", 10027008, 10027008, 0, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			o, err := Parse(load(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			s := o.Summary
			if s.SenderBytes != tc.sentBytes || s.SenderBitsPerS <= 0 {
				t.Fatalf("sent %d bytes at %.0f bit/s, want %d bytes", s.SenderBytes, s.SenderBitsPerS, tc.sentBytes)
			}
			// Received = sent x (packets - lost) / packets: within a few datagrams in flight.
			if diff := s.ReceiverBytes - tc.receivedBytes; diff < -20000 || diff > 20000 || s.ReceiverBitsPerS <= 0 {
				t.Fatalf("received %d bytes at %.0f bit/s, want about %d", s.ReceiverBytes, s.ReceiverBitsPerS, tc.receivedBytes)
			}
			if s.LostPackets == nil || *s.LostPackets != tc.lostPackets || len(o.StreamSummaries) != tc.streams {
				t.Fatalf("lost %v, %d stream summaries", s.LostPackets, len(o.StreamSummaries))
			}
			for _, ss := range o.StreamSummaries {
				if ss.SenderBitsPerS <= 0 || ss.ReceiverBitsPerS <= 0 {
					t.Fatalf("stream summary %+v", ss)
				}
			}
		})
	}
}

// A run that broke off (client killed with SIGTERM/SIGINT, server gone) still printed the
// intervals it measured; they come back beside the error, for a failed result to carry.
func TestParseKeepsTheIntervalsOfAnInterruptedRun(t *testing.T) {
	cases := []struct {
		file      string
		class     string
		intervals int
		protocol  string
	}{
		{"iperf3-3.12-interrupted-sigterm.json", "interrupted", 3, "TCP"},
		{"iperf3-3.12-udp-interrupted-sigterm.json", "interrupted", 3, "UDP"},
		{"iperf3-3.12-tcp-reverse-interrupted-sigint.json", "interrupted", 3, "TCP"},
		{"iperf3-3.17-interrupted-sigterm.json", "interrupted", 3, "TCP"},
		{"iperf3-3.12-server-killed-parallel2.json", "peer gone", 6, "TCP"},
		{"iperf3-3.12-udp-server-killed.json", "peer gone", 2, "UDP"},
		{"server-killed.json", "peer gone", 2, "TCP"},
		{"server-terminated.json", "peer gone", 1, "TCP"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			o, err := Parse(load(t, tc.file))
			var runErr *RunError
			if !errors.As(err, &runErr) || runErr.Class != tc.class {
				t.Fatalf("error %v, want class %s", err, tc.class)
			}
			if len(o.Intervals) < tc.intervals || o.Protocol != tc.protocol || o.Iperf3Version == "" || o.Streams < 1 {
				t.Fatalf("partial run: %d intervals, protocol %q, version %q", len(o.Intervals), o.Protocol, o.Iperf3Version)
			}
			for _, iv := range o.Intervals {
				if iv.EndS <= iv.StartS || iv.Bytes <= 0 {
					t.Fatalf("interval %+v", iv)
				}
			}
		})
	}
	for _, file := range []string{"busy.json", "refused.json", "iperf3-3.12-busy.json", "iperf3-3.1.3-busy.json", "iperf3-3.17-busy.json"} {
		o, err := Parse(load(t, file))
		var runErr *RunError
		if !errors.As(err, &runErr) || runErr.Class == "" || len(o.Intervals) != 0 {
			t.Errorf("%s: %v, %d intervals", file, err, len(o.Intervals))
		}
	}
}

func TestIperf3ErrorsBecomeClassifiedRunErrors(t *testing.T) {
	for file, class := range map[string]string{"refused.json": "refused", "busy.json": "busy"} {
		_, err := Parse(load(t, file))
		var runErr *RunError
		if !errors.As(err, &runErr) || runErr.Class != class || runErr.Message == "" {
			t.Errorf("%s: %v, want class %s", file, err, class)
		}
	}
	for message, class := range map[string]string{
		"unable to connect to server: Connection timed out":         "timeout",
		"unable to connect to server: No route to host":             "unreachable",
		"control socket has closed unexpectedly":                    "peer gone",
		"unable to receive results: Connection reset by peer":       "peer gone",
		"error - unable to set TCP_CONGESTION: Supplied congestion": "other",
	} {
		if got := classify(message).Class; got != class {
			t.Errorf("%q: %s, want %s", message, got, class)
		}
	}
}

// A reverse TCP run's client receives: its rows are the receiver's. With --get-server-output
// against a server running -J, the server's own rows come back too, with the sender's
// TCP_INFO; they join the client's as sender rows, under the client's stream ids, and the
// server's end summary fills in the sender's RTT and windows.
func TestParseReverseRunWithTheSendingServersOutput(t *testing.T) {
	cases := []struct {
		file                  string
		streams               []int // the client's stream ids
		received, sent        int   // rows
		minRTT, meanRTT, maxR int64
		maxCwnd, maxWnd       int64
		retransmits           int64
	}{
		// -t 3 -O 1: the server also printed a last 1.2 ms interval the client did not.
		{"iperf3-3.12-tcp-reverse-server-output.json", []int{5}, 4, 5, 123, 217, 384, 3012218, 32901120, 29},
		// -P 2: the server's sockets are 5 and 8, the client's 5 and 7.
		{"iperf3-3.12-tcp-reverse-parallel2-server-output.json", []int{5, 7}, 4, 4, 169, 205, 241, 1309660, 396288, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			o, err := Parse(load(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !o.Reverse || o.Protocol != "TCP" || o.SenderCongestion == "" {
				t.Fatalf("run %+v", o)
			}
			received, sent := 0, 0
			streams := map[bool]map[int]bool{false: {}, true: {}}
			for _, iv := range o.Intervals {
				streams[iv.Sender][iv.Stream] = true
				if !iv.Sender {
					received++
					if iv.SndCwnd != nil || iv.RTTUs != nil {
						t.Errorf("a receiver row with the sender's TCP_INFO: %+v", iv)
					}
					continue
				}
				sent++
				if iv.RTTUs == nil || iv.SndCwnd == nil || iv.SndWnd == nil || iv.RTTVarUs == nil || iv.PMTU == nil ||
					iv.Retransmits == nil || iv.Bytes <= 0 || iv.BitsPerS <= 0 || iv.EndS <= iv.StartS {
					t.Errorf("sender row %+v", iv)
				}
			}
			if received != tc.received || sent != tc.sent {
				t.Fatalf("%d receiver rows, %d sender rows; want %d, %d", received, sent, tc.received, tc.sent)
			}
			for _, id := range tc.streams {
				if !streams[false][id] || !streams[true][id] {
					t.Errorf("stream %d lacks receiver or sender rows: %v", id, streams)
				}
			}
			if len(streams[true]) != len(tc.streams) {
				t.Errorf("sender rows under the server's stream ids: %v", streams[true])
			}
			s := o.Summary
			if s.MinRTTUs == nil || *s.MinRTTUs != tc.minRTT || s.MeanRTTUs == nil || *s.MeanRTTUs != tc.meanRTT ||
				s.MaxRTTUs == nil || *s.MaxRTTUs != tc.maxR || s.MaxSndCwnd == nil || *s.MaxSndCwnd != tc.maxCwnd ||
				s.MaxSndWnd == nil || *s.MaxSndWnd != tc.maxWnd || s.Retransmits == nil || *s.Retransmits != tc.retransmits {
				t.Errorf("summary rtt %s/%s/%s cwnd %s wnd %s retransmits %s", show(s.MinRTTUs), show(s.MeanRTTUs),
					show(s.MaxRTTUs), show(s.MaxSndCwnd), show(s.MaxSndWnd), show(s.Retransmits))
			}
			if s.ReceiverBitsPerS <= 0 || s.SenderBitsPerS <= 0 {
				t.Errorf("rates %+v", s)
			}
			for i, ss := range o.StreamSummaries {
				if ss.MinRTTUs == nil || ss.MeanRTTUs == nil || ss.MaxSndCwnd == nil || ss.Retransmits == nil {
					t.Errorf("stream summary %d %+v", i, ss)
				}
			}
			res := result.New(TestType, "throughput:peer", "", "127.0.0.1", "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", time.Now())
			o.Options = Spec{DurationS: o.DurationS, OmitS: o.OmitS, Parallel: o.Streams, Reverse: true}.Options()
			res.Throughput = &o
			checkAgainstContract(t, res)
		})
	}
}

func show(v *int64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatInt(*v, 10)
}

// A server without -J (the agents' own) answers --get-server-output with its text output,
// which has no RTT: the run reads as one without the server's part.
func TestParseReverseRunWithTheServersTextOutput(t *testing.T) {
	o, err := Parse(load(t, "iperf3-3.12-tcp-reverse-server-text.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range o.Intervals {
		if iv.Sender || iv.RTTUs != nil {
			t.Fatalf("row %+v from a text server output", iv)
		}
	}
	if len(o.Intervals) != 2 || o.Summary.MinRTTUs != nil || o.Summary.ReceiverBitsPerS <= 0 {
		t.Fatalf("%d rows, summary %+v", len(o.Intervals), o.Summary)
	}
}

// Whatever the server's part holds, the client's document reads exactly as it would
// without it: a run never fails, or changes, because of a server part that cannot be used.
func TestParseIgnoresAServerPartItCannotUse(t *testing.T) {
	var real map[string]any
	if err := json.Unmarshal(load(t, "iperf3-3.12-tcp-reverse-server-output.json"), &real); err != nil {
		t.Fatal(err)
	}
	server := func(d map[string]any) map[string]any { return d["server_output_json"].(map[string]any) }
	set := func(value any) func(map[string]any) {
		return func(d map[string]any) { d["server_output_json"] = value }
	}
	cases := map[string]func(d map[string]any){
		"a string":                  set("Accepted connection from 127.0.0.1"),
		"a number":                  set(5),
		"null":                      set(nil),
		"an array":                  set([]any{}),
		"an empty object":           set(map[string]any{}),
		"intervals a number":        set(map[string]any{"intervals": 5}),
		"interval streams a string": set(map[string]any{"intervals": []any{map[string]any{"streams": "x"}}}),
		"an error document":         set(map[string]any{"error": "the server is busy running a test. try again later"}),
		"an error with intervals":   func(d map[string]any) { server(d)["error"] = "interrupt - the server has terminated" },
		"no start":                  func(d map[string]any) { delete(server(d), "start") },
		"start a string":            func(d map[string]any) { server(d)["start"] = "x" },
		"no intervals":              func(d map[string]any) { delete(server(d), "intervals") },
		"empty intervals":           func(d map[string]any) { server(d)["intervals"] = []any{} },
		"end a number":              func(d map[string]any) { server(d)["end"] = 7 },
		"end streams a number":      func(d map[string]any) { server(d)["end"].(map[string]any)["streams"] = 7 },
		"a socket a string": func(d map[string]any) {
			iv := server(d)["intervals"].([]any)[1].(map[string]any)["streams"].([]any)[0].(map[string]any)
			iv["socket"] = "5"
		},
		"rtt a string": func(d map[string]any) {
			iv := server(d)["intervals"].([]any)[1].(map[string]any)["streams"].([]any)[0].(map[string]any)
			iv["rtt"] = "fast"
		},
		"a UDP test": func(d map[string]any) {
			server(d)["start"].(map[string]any)["test_start"].(map[string]any)["protocol"] = "UDP"
		},
		"another test's cookie": func(d map[string]any) { server(d)["start"].(map[string]any)["cookie"] = "another" },
		"no connections":        func(d map[string]any) { delete(server(d)["start"].(map[string]any), "connected") },
		"connections a string":  func(d map[string]any) { server(d)["start"].(map[string]any)["connected"] = "x" },
		"a stream too many": func(d map[string]any) {
			start := server(d)["start"].(map[string]any)
			start["connected"] = append(start["connected"].([]any), map[string]any{"socket": 8, "remote_port": 1})
		},
		"a stream it never connected": func(d map[string]any) {
			iv := server(d)["intervals"].([]any)[1].(map[string]any)["streams"].([]any)[0].(map[string]any)
			iv["socket"] = 99
		},
		"only receiver rows": func(d map[string]any) {
			for _, iv := range server(d)["intervals"].([]any) {
				for _, s := range iv.(map[string]any)["streams"].([]any) {
					s.(map[string]any)["sender"] = false
				}
			}
		},
		"the client's connections damaged": func(d map[string]any) { d["start"].(map[string]any)["connected"] = 5 },
		"a forward run":                    func(d map[string]any) { d["start"].(map[string]any)["test_start"].(map[string]any)["reverse"] = 0 },
		"a UDP run": func(d map[string]any) {
			d["start"].(map[string]any)["test_start"].(map[string]any)["protocol"] = "UDP"
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			doc := clone(t, real)
			damage(doc)
			with, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			delete(doc, "server_output_json")
			without, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := Parse(with)
			want, wantErr := Parse(without)
			if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("with the server's part: %v %+v\nwithout: %v %+v", gotErr, got.Summary, wantErr, want.Summary)
			}
			for _, iv := range got.Intervals {
				if iv.Sender {
					t.Fatalf("a sender row from an unusable server part: %+v", iv)
				}
			}
		})
	}
}

func clone(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// When the server's rows would take a run past the contract's bound on rows, they are left
// out; the server's end summary, which adds no rows, still fills in the sender's RTT.
func TestParseLeavesOutServerRowsBeyondTheContractsBound(t *testing.T) {
	schema := contract.Load(t, "result-batch.v1.schema.json")
	bound := schema["$defs"].(map[string]any)["throughput"].(map[string]any)["properties"].(map[string]any)["intervals"].(map[string]any)["maxItems"]
	if bound != float64(MaxIntervals) {
		t.Fatalf("the contract bounds intervals at %v, MaxIntervals is %d", bound, MaxIntervals)
	}
	// The real file's 4 client and 5 server rows against a bound of 8 and of 9.
	defer func(saved int) { maxIntervals = saved }(maxIntervals)
	for bound, want := range map[int][2]int{8: {4, 0}, 9: {4, 5}} {
		maxIntervals = bound
		o, err := Parse(load(t, "iperf3-3.12-tcp-reverse-server-output.json"))
		if err != nil {
			t.Fatal(err)
		}
		rows := [2]int{}
		for _, iv := range o.Intervals {
			if iv.Sender {
				rows[1]++
			} else {
				rows[0]++
			}
		}
		if rows != want || o.Summary.MinRTTUs == nil || o.Summary.MaxSndCwnd == nil {
			t.Fatalf("bound %d: %v receiver and sender rows, want %v; summary %+v", bound, rows, want, o.Summary)
		}
	}
}

func TestMalformedOutputIsAnError(t *testing.T) {
	for name, data := range map[string]string{
		"empty":          "",
		"text":           "iperf3: error - unable to connect",
		"truncated":      `{"start": {"version": "iperf 3.12"`,
		"no start":       `{"intervals": []}`,
		"wrong protocol": `{"start": {"test_start": {"protocol": "SCTP"}}}`,
		"wrong types":    `{"start": {"test_start": {"protocol": 5}}}`,
	} {
		if _, err := Parse([]byte(data)); !errors.Is(err, ErrNotIperf3JSON) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"start":{"test_start":{"protocol":"TCP"}},"end":{"streams":[{}]}}`))
	f.Add([]byte(`{"error":"unable to connect to server: Connection refused"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(data)
		var runErr *RunError
		switch {
		case errors.As(err, &runErr):
			if runErr.Class == "" || len(runErr.Message) > 303 {
				t.Fatalf("run error %+v", runErr)
			}
			return
		case err != nil:
			if !errors.Is(err, ErrNotIperf3JSON) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if o.Protocol != "TCP" && o.Protocol != "UDP" {
			t.Fatalf("protocol %q", o.Protocol)
		}
		if o.Intervals == nil || o.StreamSummaries == nil {
			t.Fatal("nil slices encode as null")
		}
		for _, iv := range o.Intervals {
			if iv.Bytes < 0 || iv.BitsPerS < 0 {
				t.Fatalf("negative amount %+v", iv)
			}
			checkNonNegative(t, iv.Retransmits, iv.SndCwnd, iv.SndWnd, iv.RTTUs, iv.RTTVarUs, iv.PMTU, iv.Packets, iv.LostPackets)
			checkFinite(t, iv.JitterMs)
		}
		for _, s := range append([]result.ThroughputSummary{o.Summary}, o.StreamSummaries...) {
			if s.SenderBytes < 0 || s.ReceiverBytes < 0 || s.SenderBitsPerS < 0 || s.ReceiverBitsPerS < 0 {
				t.Fatalf("negative amount %+v", s)
			}
			checkNonNegative(t, s.Retransmits, s.MinRTTUs, s.MeanRTTUs, s.MaxRTTUs, s.MaxSndCwnd, s.MaxSndWnd, s.LostPackets, s.Packets)
			checkFinite(t, s.HostCPUPercent, s.RemoteCPUPercent, s.JitterMs, s.LostPercent)
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatalf("a parsed run does not encode: %v", err)
		}
	})
}

func checkNonNegative(t *testing.T, values ...*int64) {
	t.Helper()
	for _, v := range values {
		if v != nil && *v < 0 {
			t.Fatalf("negative counter %d", *v)
		}
	}
}

func checkFinite(t *testing.T, values ...*float64) {
	t.Helper()
	for _, v := range values {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			t.Fatalf("non-finite value %v", *v)
		}
	}
}

// iperf3 restarting its clock after the omitted seconds can print an interval per stream
// that ends before it starts: it is left out, and the run is kept with the rest.
func TestParseLeavesOutAnIntervalThatEndsBeforeItStarts(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(load(t, "iperf3-3.12-tcp-parallel3.json"), &doc); err != nil {
		t.Fatal(err)
	}
	intervals := doc["intervals"].([]any)
	before := 0
	for _, iv := range intervals {
		before += len(iv.(map[string]any)["streams"].([]any))
	}
	// The second reporting interval as a loaded iperf3 3.12 printed it at the omit boundary.
	quirk := intervals[1].(map[string]any)["streams"].([]any)
	for _, s := range quirk {
		s.(map[string]any)["start"], s.(map[string]any)["end"] = 1.000445, 1.000213
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Intervals) != before-len(quirk) {
		t.Fatalf("%d intervals kept of %d, %d backwards", len(o.Intervals), before, len(quirk))
	}
	for _, iv := range o.Intervals {
		if iv.EndS < iv.StartS {
			t.Fatalf("kept %+v", iv)
		}
	}
}
