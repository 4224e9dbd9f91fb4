package throughput

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/result"
)

func TestDecodeSpecReadsARamp(t *testing.T) {
	spec, err := DecodeSpec(json.RawMessage(`{"duration_s": 5, "omit_s": 1, "udp": true, "bitrate_bps": 0,
		"ramp_bps": [60000000, 90000000, 135000000, 200000000], "path_rtt_ms": 12.5}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{60_000_000, 90_000_000, 135_000_000, 200_000_000}
	if !slices.Equal(spec.RampBps, want) || !slices.Equal(spec.Options().RampBps, want) {
		t.Fatalf("ramp %v, options %v", spec.RampBps, spec.Options().RampBps)
	}
	// A step is an ordinary UDP run at its rate.
	args := spec.step(135_000_000).Args("198.18.0.2", "")
	if i := slices.Index(args, "-b"); i < 0 || args[i+1] != "135000000" || !slices.Contains(args, "-u") {
		t.Fatalf("step args %v", args)
	}
	// Finely paced, omitting nothing (iperf3 miscounts UDP loss across --omit), whatever omit_s says.
	if i := slices.Index(args, "--pacing-timer"); i < 0 || args[i+1] != "100" {
		t.Fatalf("step args %v", args)
	}
	if i := slices.Index(args, "-O"); i < 0 || args[i+1] != "0" || spec.Options().OmitS != 0 {
		t.Fatalf("step args %v, options omit %d", args, spec.Options().OmitS)
	}
	// Ordinary runs, the server's empty ramp included, record no ramp: their results are
	// byte for byte what they were before ramps.
	for _, raw := range []string{`{}`, `{"ramp_bps": []}`} {
		spec, err := DecodeSpec(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		encoded, _ := json.Marshal(spec.Options())
		if strings.Contains(string(encoded), "ramp_bps") {
			t.Errorf("%s: options %s", raw, encoded)
		}
	}
}

func TestValidateBoundsARamp(t *testing.T) {
	udp := func(ramp ...int64) Spec {
		return Spec{DurationS: 1, OmitS: 1, Parallel: 1, UDP: true, Port: DefaultPort, ConnectTimeMs: 5000, RampBps: ramp}
	}
	eight := udp(1, 2, 3, 4, 5, 6, 7, MaxRateBps)
	for name, spec := range map[string]Spec{
		"one step at the lowest rate":                       udp(1),
		"eight steps, the last at the highest rate":         eight,
		"without bitrate_bps (the ramp's rates replace it)": udp(60e6, 90e6),
	} {
		if err := spec.Validate(); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
	notUDP, parallel := udp(60e6, 90e6), udp(60e6, 90e6)
	notUDP.UDP, notUDP.BitrateBps = false, 0
	parallel.Parallel = 2
	for name, tc := range map[string]struct {
		spec Spec
		want string
	}{
		"nine steps":       {udp(1, 2, 3, 4, 5, 6, 7, 8, 9), "ramp_bps has 9 rates, at most 8"},
		"a zero rate":      {udp(0, 90e6), "ramp_bps[0] 0 out of range 1..400000000000"},
		"a negative rate":  {udp(60e6, -1), "ramp_bps[1] -1 out of range"},
		"beyond 400 Gbit":  {udp(60e6, MaxRateBps+1), "ramp_bps[1] 400000000001 out of range"},
		"falling":          {udp(90e6, 60e6), "ramp_bps[1] 60000000 does not rise above 90000000"},
		"a repeated rate":  {udp(60e6, 60e6), "ramp_bps[1] 60000000 does not rise above 60000000"},
		"TCP":              {notUDP, "a ramp (ramp_bps) is a UDP test: udp must be true"},
		"parallel streams": {parallel, "a ramp (ramp_bps) runs one stream: parallel 2 must be 1"},
	} {
		err := tc.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// As the plan sends them: the bounds hold after decoding too.
	for _, raw := range []string{`{"udp": true, "ramp_bps": [1,2,3,4,5,6,7,8,9]}`, `{"udp": true, "ramp_bps": [0]}`,
		`{"udp": true, "ramp_bps": [400000000001]}`, `{"udp": true, "ramp_bps": [2, 1]}`, `{"ramp_bps": [1]}`,
		`{"udp": true, "parallel": 2, "ramp_bps": [1]}`, `{"udp": true, "ramp_bps": ["1"]}`, `{"udp": true, "ramp_bps": 1}`} {
		if _, err := DecodeSpec(json.RawMessage(raw)); err == nil {
			t.Errorf("%s accepted", raw)
		}
	}
}

// parsed is a recorded run as the prober gets it.
func parsed(t *testing.T, file string) result.Throughput {
	t.Helper()
	o, err := Parse(load(t, file))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return o
}

// Four recorded 3.12 runs (-t 2 -O 1) as a ramp: 5, 10 and 20 Mbit/s lose nothing on
// loopback; the last, unlimited (-b 0, 1.24 Gbit/s sent), loses 77%. Every figure below is
// read off the files (testdata/README.md).
func TestCombineRampFromRecordedSteps(t *testing.T) {
	spec := Spec{DurationS: 2, OmitS: 1, Parallel: 1, UDP: true, RampBps: []int64{5e6, 10e6, 20e6, 2e9}}
	var steps []rampRun
	for i, file := range []string{"iperf3-3.12-udp-omit1-5M.json", "iperf3-3.12-udp-omit1-10M.json",
		"iperf3-3.12-udp-omit1-20M.json", "iperf3-3.12-udp-omit1-loss.json"} {
		steps = append(steps, rampRun{offeredBps: spec.RampBps[i], outcome: parsed(t, file)})
	}
	o := combineRamp(spec, steps)

	if o.Protocol != "UDP" || o.Streams != 1 || o.Reverse || o.Iperf3Version != "3.12" || o.OmitS != 1 ||
		o.DurationS != 8 || !slices.Equal(o.Options.RampBps, spec.RampBps) || o.SenderCongestion != "" {
		t.Fatalf("run %+v", o)
	}
	// Each step starts where the one before ended: its 1 s omitted and its measured seconds
	// (the end of its last measured interval).
	want := []result.RampStep{
		{OfferedBps: 5e6, StartedS: 0, DurationS: 1.999938, SenderBitsPerS: 4980890.407602636,
			ReceiverBitsPerS: 4959593.253958376, Packets: 38, LostPackets: 0, LostPercent: 0, JitterMs: ptr(0.013497936095732192)},
		{OfferedBps: 10e6, StartedS: 2.999938, DurationS: 2.000005, SenderBitsPerS: 9961447.09638226,
			ReceiverBitsPerS: 9960122.403414337, Packets: 76, LostPackets: 0, LostPercent: 0, JitterMs: ptr(0.00994801456347373)},
		{OfferedBps: 20e6, StartedS: 5.999943, DurationS: 1.999998, SenderBitsPerS: 19922963.92296392,
			ReceiverBitsPerS: 19918910.420639817, Packets: 152, LostPackets: 0, LostPercent: 0, JitterMs: ptr(0.010240392953699488)},
		{OfferedBps: 2e9, StartedS: 8.999941, DurationS: 2.000515, SenderBitsPerS: 1240416592.7273726,
			ReceiverBitsPerS: 605182979.8635173, Packets: 221560, LostPackets: 171363, LostPercent: 77.34383462718903,
			JitterMs: ptr(0.278769755077642)},
	}
	if len(o.Ramp) != len(want) {
		t.Fatalf("%d steps", len(o.Ramp))
	}
	for i := range want {
		if got := o.Ramp[i]; !sameStep(got, want[i]) {
			t.Errorf("step %d:\n got %+v jitter %v\nwant %+v jitter %v", i+1, got, *got.JitterMs, want[i], *want[i].JitterMs)
		}
	}

	// Every step's three intervals (one omitted), shifted by the step's start.
	if len(o.Intervals) != 12 {
		t.Fatalf("%d intervals", len(o.Intervals))
	}
	for i, step := range want {
		first, last := o.Intervals[3*i], o.Intervals[3*i+2]
		if !first.Omitted || first.StartS != step.StartedS || last.Omitted || last.EndS != step.StartedS+step.DurationS {
			t.Errorf("step %d intervals %+v .. %+v", i+1, first, last)
		}
	}
	if iv := o.Intervals[4]; !near(iv.StartS, 2.999938+1.6e-05) || !near(iv.EndS, 2.999938+0.999986) || *iv.Packets != 38 {
		t.Errorf("step 2's first measured interval %+v", iv)
	}
	checkIntervalTimeline(t, o)

	// Totals: 318,900,288 bytes sent and 160,053,488 received in 8.000456 measured seconds;
	// 171,363 of 221,826 datagrams lost; jitter and CPU of the last, busiest step.
	s := o.Summary
	if s.SenderBytes != 318900288 || s.ReceiverBytes != 160053488 || !near(s.SenderBitsPerS, 318900288*8/8.000456) ||
		!near(s.ReceiverBitsPerS, 160053488*8/8.000456) || *s.Packets != 221826 || *s.LostPackets != 171363 ||
		!near(*s.LostPercent, 171363.0/221826*100) || *s.JitterMs != 0.278769755077642 ||
		*s.HostCPUPercent != 66.6989837768107 || *s.RemoteCPUPercent != 33.52221585726773 {
		t.Errorf("summary %+v", s)
	}
	if s.Retransmits != nil || s.MinRTTUs != nil || s.MeanRTTUs != nil || s.MaxRTTUs != nil || s.MaxSndCwnd != nil || s.MaxSndWnd != nil {
		t.Errorf("UDP summary with TCP figures %+v", s)
	}
	if len(o.StreamSummaries) != 1 || o.StreamSummaries[0] != s {
		t.Errorf("stream summaries %+v", o.StreamSummaries)
	}
}

// Reversed, the client receives: a step's receiver figures are the client's own, as Parse
// reads them; before 3.11 (no sum_received) they are what the loss leaves of what was sent.
// Runs without omitted seconds follow each other directly.
func TestCombineRampReadsTheReceiverInEitherDirection(t *testing.T) {
	reverse := parsed(t, "iperf3-3.12-udp-omit1-20M-reverse.json")
	o := combineRamp(Spec{DurationS: 2, OmitS: 1, Parallel: 1, UDP: true, Reverse: true, RampBps: []int64{20e6}},
		[]rampRun{{20e6, reverse}})
	if step := o.Ramp[0]; !o.Reverse || step.SenderBitsPerS != 19870228.28436159 || step.ReceiverBitsPerS != 19923571.592505164 ||
		step.Packets != 152 || *step.JitterMs != 0.00704617419965669 || step.DurationS != 1.999937 || o.Intervals[1].Sender {
		t.Errorf("reversed step %+v", step)
	}

	for _, file := range []string{"iperf3-3.1.3-udp-loss.json", "iperf3-3.7-udp-reverse-loss.json"} {
		run := parsed(t, file)
		o := combineRamp(Spec{DurationS: 2, OmitS: 1, Parallel: 1, UDP: true, RampBps: []int64{1e9, 2e9}},
			[]rampRun{{1e9, run}, {2e9, run}})
		measured := run.Intervals[len(run.Intervals)-1].EndS
		for i, step := range o.Ramp {
			if step.StartedS != float64(i)*measured || step.DurationS != measured ||
				step.SenderBitsPerS != run.Summary.SenderBitsPerS || step.ReceiverBitsPerS != run.Summary.ReceiverBitsPerS ||
				step.ReceiverBitsPerS <= 0 || step.LostPackets != *run.Summary.LostPackets || step.LostPercent != *run.Summary.LostPercent {
				t.Errorf("%s step %d: %+v, run %+v", file, i+1, step, run.Summary)
			}
		}
		if o.Intervals[2].StartS != o.Intervals[1].EndS {
			t.Errorf("%s: step 2 starts at %v, step 1 ended at %v", file, o.Intervals[2].StartS, o.Intervals[1].EndS)
		}
		checkIntervalTimeline(t, o)
	}
}

func TestCombineRampWithoutStepsIsNothing(t *testing.T) {
	if o := combineRamp(Spec{RampBps: []int64{1}}, nil); len(o.Intervals) != 0 || o.Ramp != nil {
		t.Fatalf("%+v", o)
	}
	if got := mbits(120_000_000) + ", " + mbits(5_500_000); got != "120 Mbit/s, 5.5 Mbit/s" {
		t.Fatal(got)
	}
}

func sameStep(a, b result.RampStep) bool {
	jitter := a.JitterMs == nil && b.JitterMs == nil || a.JitterMs != nil && b.JitterMs != nil && *a.JitterMs == *b.JitterMs
	a.JitterMs, b.JitterMs = nil, nil
	return jitter && a == b
}

func ptr(v float64) *float64 { return &v }

// near is equality up to float64 rounding: Go evaluates constant expressions exactly.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// checkIntervalTimeline holds a ramp's intervals to one time line as the backend reckons
// it (a measured interval ends omit_s after its end_s): every interval ends after the one
// before, and inside its own step.
func checkIntervalTimeline(t *testing.T, o result.Throughput) {
	t.Helper()
	at := func(iv result.ThroughputInterval) float64 {
		if iv.Omitted {
			return iv.EndS
		}
		return iv.EndS + float64(o.OmitS)
	}
	for i, iv := range o.Intervals {
		if iv.EndS < iv.StartS || i > 0 && at(iv) <= at(o.Intervals[i-1]) {
			t.Errorf("interval %d (%+v) does not follow %+v", i, iv, o.Intervals[max(i-1, 0)])
		}
	}
	for i, step := range o.Ramp {
		if i > 0 && step.StartedS <= o.Ramp[i-1].StartedS {
			t.Errorf("step %d starts at %v, before step %d", i+1, step.StartedS, i)
		}
	}
}

// fakeIperf3 is an iperf3 that prints a recorded run for the rates in outputs and fails
// (the server gone) for any other, logging each rate it was asked for.
func fakeIperf3(t *testing.T, outputs map[int64]string, otherwise string) (binary, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -b ] && rate=$2; shift; done\necho \"$rate\" >> " + calls +
		"\ncase $rate in\n"
	for rate, file := range outputs {
		path, err := filepath.Abs(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		script += strconv.FormatInt(rate, 10) + ") exec cat " + path + " ;;\n"
	}
	script += "*) " + otherwise + " ;;\nesac\n"
	binary = filepath.Join(dir, "iperf3")
	if err := os.WriteFile(binary, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return binary, calls
}

func rampTest(ramp string) string {
	return `{"duration_s": 2, "omit_s": 1, "udp": true, "ramp_bps": ` + ramp + `}`
}

// A step that fails ends the ramp: the result is failed, names the step and iperf3's error,
// keeps the steps finished before, and no later step runs.
func TestARampStepThatFailsEndsTheRampKeepingTheStepsBefore(t *testing.T) {
	binary, calls := fakeIperf3(t, map[int64]string{5e6: "iperf3-3.12-udp-omit1-5M.json", 10e6: "iperf3-3.12-udp-omit1-10M.json"},
		`echo '{"error": "unable to receive control message: Connection reset by peer"}'; exit 1`)
	res := New(binary).Run(testContext(t, 20*time.Second), loopbackTest(rampTest(`[5000000, 10000000, 120000000, 200000000]`)), "")
	if res.Status != result.StatusFailed || res.Error !=
		"ramp step 3 of 4 (120 Mbit/s): iperf3 peer gone: unable to receive control message: Connection reset by peer" {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	o := res.Throughput
	if o == nil || len(o.Ramp) != 2 || o.Ramp[0].OfferedBps != 5e6 || o.Ramp[1].OfferedBps != 10e6 ||
		len(o.Intervals) != 6 || o.Ramp[1].StartedS != 2.999938 || len(o.Options.RampBps) != 4 {
		t.Fatalf("the finished steps were not kept: %+v", o)
	}
	// A reset before the step began may be the server still ending step 2: tried again after
	// each pause, then the ramp ends there.
	if data, _ := os.ReadFile(calls); string(data) != "5000000\n10000000\n"+strings.Repeat("120000000\n", 1+len(reopenPauses)) {
		t.Fatalf("iperf3 ran for %q", data)
	}
	checkAgainstContract(t, res)

	// iperf3's own error stays reachable through the step's.
	_, err := New(binary).Measure(testContext(t, 20*time.Second), mustDecode(t, rampTest(`[5000000, 7000000]`)), "127.0.0.1", nil)
	var runErr *RunError
	if !errors.As(err, &runErr) || runErr.Class != "peer gone" {
		t.Fatalf("step error %v", err)
	}
	// A first step that fails leaves nothing to keep.
	res = New(binary).Run(testContext(t, 20*time.Second), loopbackTest(rampTest(`[1000000, 5000000]`)), "")
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "ramp step 1 of 2 (1 Mbit/s): ") || res.Throughput != nil {
		t.Fatalf("first step failed: %s %q %+v", res.Status, res.Error, res.Throughput)
	}
}

// Cancelled (the agent stopping), the running step is stopped at once and no later one runs.
func TestACancelledRampStopsAtOnce(t *testing.T) {
	binary, calls := fakeIperf3(t, map[int64]string{5e6: "iperf3-3.12-udp-omit1-5M.json"}, "exec sleep 30")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if data, _ := os.ReadFile(calls); strings.Count(string(data), "\n") == 2 {
				break
			}
		}
		cancel()
	}()
	began := time.Now()
	res := New(binary).Run(ctx, loopbackTest(rampTest(`[5000000, 10000000, 20000000]`)), "")
	if res.Status != result.StatusFailed || res.Error != "ramp step 2 of 3 (10 Mbit/s): iperf3 cancelled (agent stopping)" {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("stopping took %v", took)
	}
	if data, _ := os.ReadFile(calls); string(data) != "5000000\n10000000\n" || len(res.Throughput.Ramp) != 1 {
		t.Fatalf("iperf3 ran for %q; kept %+v", data, res.Throughput)
	}
}

func mustDecode(t *testing.T, raw string) Spec {
	t.Helper()
	spec, err := DecodeSpec(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// A real ramp on loopback, where nothing polices: every step gets what it offered.
func TestRampAgainstARealIperf3Server(t *testing.T) {
	port, _ := startServer(t)
	p := New("iperf3")
	p.Slack = 10 * time.Second
	spec := `{"duration_s": 1, "omit_s": 1, "udp": true, "ramp_bps": [5000000, 10000000, 20000000], "port": ` + strconv.Itoa(port) + `}`
	res := p.Run(testContext(t, 60*time.Second), loopbackTest(spec), "v7")
	if res.Status != result.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	o := res.Throughput
	// omit_s 1 asked, 0 run: a ramp step omits nothing.
	if len(o.Ramp) != 3 || o.Protocol != "UDP" || o.Streams != 1 || o.DurationS != 3 || o.OmitS != 0 || o.Iperf3Version == "" {
		t.Fatalf("run %+v", o)
	}
	received := 0.0
	for i, step := range o.Ramp {
		t.Logf("step %d at %.3f s: offered %d, sent %.0f, received %.0f bit/s, %d of %d lost", i+1, step.StartedS,
			step.OfferedBps, step.SenderBitsPerS, step.ReceiverBitsPerS, step.LostPackets, step.Packets)
		// How close iperf3's pacing comes to the offered rate is the CPU's to say (16 of 20
		// Mbit/s in a CI run with every core busy); loopback delivers what was sent.
		if step.OfferedBps != []int64{5e6, 10e6, 20e6}[i] || step.SenderBitsPerS <= 0 ||
			step.ReceiverBitsPerS < 0.9*step.SenderBitsPerS || step.DurationS < 0.9 || step.Packets <= 0 {
			t.Errorf("step %d: %+v", i+1, step)
		}
		received += step.ReceiverBitsPerS * step.DurationS
	}
	checkIntervalTimeline(t, *o)
	// The summary's rate is over the measured seconds; a step's own seconds run a little longer.
	mean := received / float64(o.DurationS)
	if math.Abs(o.Summary.ReceiverBitsPerS-mean) > 0.25*mean || *o.Summary.Packets != o.Ramp[0].Packets+o.Ramp[1].Packets+o.Ramp[2].Packets {
		t.Errorf("summary %+v against %.0f bit/s", o.Summary, mean)
	}
	checkAgainstContract(t, res)
}

// iperf3's server reopens its listening socket after each test and answers "busy" until it
// has reset it: a step that comes back sooner is refused or turned away and connects again
// a moment later. A server that keeps refusing fails the step after the pauses; a refused
// first step is not retried (nothing is listening, or another client's test runs).
func TestARampStepTurnedAwayWhileTheServerEndsTheLastStepConnectsAgain(t *testing.T) {
	answers := map[string]string{
		"refused":   `echo '{"error": "unable to connect to server: Connection refused"}'; exit 1`,
		"busy":      `echo '{"error": "the server is busy running a test. try again later"}'; exit 1`,
		"peer gone": `echo '{"error": "unable to receive control message: Connection reset by peer"}'; exit 1`,
	}
	for class, answer := range answers {
		t.Run(class, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "turned-away-once")
			binary, calls := fakeIperf3(t, map[int64]string{5e6: "iperf3-3.12-udp-omit1-5M.json"},
				`if [ -e `+marker+` ]; then exec cat `+testdataPath(t, "iperf3-3.12-udp-omit1-10M.json")+`; fi; touch `+marker+`; `+answer)
			res := New(binary).Run(testContext(t, 20*time.Second), loopbackTest(rampTest(`[5000000, 10000000]`)), "")
			if res.Status != result.StatusOK || len(res.Throughput.Ramp) != 2 {
				t.Fatalf("%s %q %+v", res.Status, res.Error, res.Throughput)
			}
			if data, _ := os.ReadFile(calls); string(data) != "5000000\n10000000\n10000000\n" {
				t.Fatalf("iperf3 ran for %q", data)
			}

			binary, calls = fakeIperf3(t, map[int64]string{5e6: "iperf3-3.12-udp-omit1-5M.json"}, answer)
			res = New(binary).Run(testContext(t, 20*time.Second), loopbackTest(rampTest(`[5000000, 10000000]`)), "")
			if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "ramp step 2 of 2 (10 Mbit/s): iperf3 "+class+": ") {
				t.Fatalf("%s %q", res.Status, res.Error)
			}
			if data, _ := os.ReadFile(calls); strings.Count(string(data), "10000000\n") != 1+len(reopenPauses) {
				t.Fatalf("iperf3 ran for %q", data)
			}

			res = New(binary).Run(testContext(t, 20*time.Second), loopbackTest(rampTest(`[1000000, 5000000]`)), "")
			if data, _ := os.ReadFile(calls); res.Status != result.StatusFailed || strings.Count(string(data), "1000000\n") != 1 {
				t.Fatalf("%s %q; iperf3 ran for %q", res.Status, res.Error, data)
			}
		})
	}
}

// A server that dies in the middle of a step (its reset after intervals were measured) is
// not still closing: the step fails at once.
func TestARampStepWhoseServerDiedMidTestIsNotRetried(t *testing.T) {
	binary, calls := fakeIperf3(t, map[int64]string{5e6: "iperf3-3.12-udp-omit1-5M.json"},
		`cat `+testdataPath(t, "iperf3-3.12-udp-server-killed.json")+`; exit 1`)
	res := New(binary).Run(testContext(t, 20*time.Second), loopbackTest(rampTest(`[5000000, 10000000]`)), "")
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "ramp step 2 of 2 (10 Mbit/s): iperf3 peer gone") {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	if data, _ := os.ReadFile(calls); strings.Count(string(data), "10000000\n") != 1 {
		t.Fatalf("iperf3 ran for %q", data)
	}
}

func testdataPath(t *testing.T, file string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return path
}
