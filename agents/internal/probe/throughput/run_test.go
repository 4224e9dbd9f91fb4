package throughput

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fathom-net/fathom/agents/internal/contract"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func TestOmitGrowsWithRTTAndWindow(t *testing.T) {
	cases := []struct {
		rtt    time.Duration
		window int
		want   int
	}{
		{0, 0, 2},                              // no RTT known: the floor
		{8 * time.Millisecond, 6 << 20, 2},     // 2 x 10 rounds x 8 ms = 0.16 s -> 2 s floor
		{148 * time.Millisecond, 0, 4},         // 2 x 13 rounds x 148 ms = 3.8 s
		{310 * time.Millisecond, 16 << 20, 7},  // 2 x 11 rounds x 310 ms = 6.8 s
		{310 * time.Millisecond, 10 * 1448, 2}, // window reached at once
		{5 * time.Second, 0, 60},               // capped where Validate caps omit_s
	}
	for _, tc := range cases {
		if got := OmitFor(tc.rtt, tc.window, 1448); got != tc.want {
			t.Errorf("OmitFor(%v, %d) = %d, want %d", tc.rtt, tc.window, got, tc.want)
		}
	}
}

func TestArgsCarryEveryOption(t *testing.T) {
	spec := Spec{DurationS: 20, OmitS: 3, Parallel: 4, WindowBytes: 131072, Reverse: true, Congestion: "cubic",
		MSS: 1400, FQRateBps: 90_000_000, Port: 5202, ConnectTimeMs: 3000}
	args := spec.Args("198.18.0.2", "198.18.0.1")
	for _, want := range [][]string{{"-c", "198.18.0.2"}, {"-t", "20"}, {"-O", "3"}, {"-P", "4"}, {"-w", "131072"},
		{"-R"}, {"-C", "cubic"}, {"-M", "1400"}, {"--fq-rate", "90000000"}, {"-p", "5202"}, {"-B", "198.18.0.1"},
		{"--connect-timeout", "3000"}, {"-J"}, {"--get-server-output"}} {
		i := slices.Index(args, want[0])
		if i < 0 || (len(want) == 2 && args[i+1] != want[1]) {
			t.Errorf("args %v lack %v", args, want)
		}
	}
	udp := Spec{DurationS: 5, UDP: true, BitrateBps: 81_000_000}.Args("198.18.0.2", "")
	if i := slices.Index(udp, "-b"); i < 0 || udp[i+1] != "81000000" || !slices.Contains(udp, "-u") {
		t.Errorf("udp args %v", udp)
	}
	if i := slices.Index(udp, "-p"); i < 0 || udp[i+1] != "5201" || slices.Contains(udp, "-B") {
		t.Errorf("default port and no bind: %v", udp)
	}
}

// Only a reverse TCP run asks for the server's output: its client receives, and the
// sender's TCP_INFO (RTT, windows) is the server's. Every other run's command line is as
// it always was.
func TestArgsAskForTheServersOutputOnlyInReverseTCPRuns(t *testing.T) {
	base := []string{"-c", "198.18.0.2", "-p", "5201", "-J", "-t", "10", "-O", "2", "--connect-timeout", "5000", "-4"}
	cases := []struct {
		name string
		spec Spec
		tail []string
	}{
		{"forward TCP", Spec{DurationS: 10, OmitS: 2, Parallel: 1}, nil},
		{"reverse TCP", Spec{DurationS: 10, OmitS: 2, Parallel: 1, Reverse: true}, []string{"-R", "--get-server-output"}},
		{"reverse TCP, 4 streams", Spec{DurationS: 10, OmitS: 2, Parallel: 4, Reverse: true},
			[]string{"-P", "4", "-R", "--get-server-output"}},
		{"forward UDP", Spec{DurationS: 10, OmitS: 2, Parallel: 1, UDP: true, BitrateBps: 50_000_000},
			[]string{"-u", "-b", "50000000"}},
		{"reverse UDP", Spec{DurationS: 10, OmitS: 2, Parallel: 1, UDP: true, BitrateBps: 50_000_000, Reverse: true},
			[]string{"-R", "-u", "-b", "50000000"}},
	}
	for _, tc := range cases {
		if got, want := tc.spec.Args("198.18.0.2", ""), append(slices.Clone(base), tc.tail...); !slices.Equal(got, want) {
			t.Errorf("%s: args %v, want %v", tc.name, got, want)
		}
	}
	// A reverse ramp's steps are UDP runs: no server output either.
	ramp := Spec{DurationS: 2, Parallel: 1, UDP: true, Reverse: true, RampBps: []int64{10_000_000, 20_000_000}}
	for _, rate := range ramp.RampBps {
		if args := ramp.step(rate).Args("198.18.0.2", ""); slices.Contains(args, "--get-server-output") || !slices.Contains(args, "-R") {
			t.Errorf("ramp step args %v", args)
		}
	}
}

// A reverse TCP run against a real server: one running -J sends its own JSON back, and the
// result carries the sender's rows with TCP_INFO; one without -J (as the agents' own
// servers run) sends text, and the result is the receiver's only, as before.
func TestReverseRunAgainstRealServersWithAndWithoutJSON(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	for _, tc := range []struct {
		name       string
		serverArgs []string
		senderRows bool
	}{
		{"server -J", []string{"-J"}, true},
		{"server without -J", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			server := exec.Command("iperf3", append([]string{"-s", "-1", "-B", "127.0.0.1", "-p", strconv.Itoa(port)}, tc.serverArgs...)...)
			server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := server.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
			test := loopbackTest(`{"duration_s": 1, "omit_s": 1, "reverse": true, "port": ` + strconv.Itoa(port) + `}`)
			var res result.Result
			for attempt := 0; attempt < 20; attempt++ { // until the server listens (-J prints no banner)
				if res = New("iperf3").Run(testContext(t, 20*time.Second), test, ""); !strings.Contains(res.Error, "refused") {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if res.Status != result.StatusOK || !res.Throughput.Reverse {
				t.Fatalf("%s %q", res.Status, res.Error)
			}
			sent, received := 0, 0
			for _, iv := range res.Throughput.Intervals {
				if !iv.Sender {
					received++
				} else if iv.RTTUs != nil && iv.SndCwnd != nil {
					sent++
				}
			}
			if received == 0 || (sent > 0) != tc.senderRows || (res.Throughput.Summary.MinRTTUs != nil) != tc.senderRows {
				t.Fatalf("%d receiver rows, %d sender rows with TCP_INFO, min_rtt_us %v", received, sent, res.Throughput.Summary.MinRTTUs)
			}
			checkAgainstContract(t, res)
		})
	}
}

func TestArgsForIPv6Peers(t *testing.T) {
	spec := Spec{DurationS: 5, Parallel: 1, Port: 5201, ConnectTimeMs: 5000}
	for address, want := range map[string][]string{
		"[2001:db8::1]": {"-c", "2001:db8::1", "-6"}, // iperf3 cannot resolve "[...]"
		"2001:db8::1":   {"-c", "2001:db8::1", "-6"},
		"198.18.0.2":    {"-c", "198.18.0.2", "-4"},
	} {
		args := spec.Args(address, "")
		if i := slices.Index(args, "-c"); i < 0 || args[i+1] != want[1] || !slices.Contains(args, want[2]) {
			t.Errorf("%s: args %v", address, args)
		}
	}
	if args := spec.Args("peer.example", ""); slices.Contains(args, "-4") || slices.Contains(args, "-6") {
		t.Errorf("a host name is resolved by iperf3 in either family: %v", args)
	}
	// A bind address of the other family fails at once with a reason, not with iperf3's
	// "Invalid argument".
	p := New("iperf3")
	p.Bind = "198.18.0.1"
	if _, err := p.Measure(context.Background(), spec, "2001:db8::1", nil); err == nil || !strings.Contains(err.Error(), "IPv4") {
		t.Fatalf("bind of the other family: %v", err)
	}
}

func TestRunAgainstARealIperf3ServerOverIPv6(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := exec.Command("iperf3", "-s", "-1", "-B", "::1", "-p", strconv.Itoa(port))
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	test := loopbackTest(`{"duration_s": 1, "omit_s": 1, "port": ` + strconv.Itoa(port) + `}`)
	test.Peer.Address = "[::1]"
	var res result.Result
	for attempt := 0; attempt < 20; attempt++ { // until the server listens
		if res = New("iperf3").Run(testContext(t, 20*time.Second), test, ""); !strings.Contains(res.Error, "refused") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res.Status != result.StatusOK || res.Throughput.Summary.ReceiverBitsPerS <= 0 {
		t.Fatalf("over ::1: %s %q", res.Status, res.Error)
	}
}

func TestDecodeSpecAppliesDefaultsAndDerivesOmit(t *testing.T) {
	spec, err := DecodeSpec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if spec.DurationS != 20 || spec.Parallel != 1 || spec.Port != DefaultPort || spec.OmitS != 0 {
		t.Fatalf("defaults %+v", spec)
	}
	if o := spec.Options(); o.OmitS != 2 || o.DurationS != 20 || o.Parallel != 1 {
		t.Fatalf("options %+v", o)
	}
	spec, err = DecodeSpec(json.RawMessage(`{"path_rtt_ms": 148, "parallel": 4}`))
	if err != nil {
		t.Fatal(err)
	}
	if o := spec.Options(); o.OmitS != 4 || o.Parallel != 4 {
		t.Fatalf("omit for 148 ms: %+v", o)
	}
	if spec, _ = DecodeSpec(json.RawMessage(`{"omit_s": 7, "path_rtt_ms": 148}`)); spec.Options().OmitS != 7 {
		t.Fatal("an explicit omit_s must win over the derived one")
	}
	// What the server sends: its normalised spec, every option present, port 0 for the default.
	spec, err = DecodeSpec(json.RawMessage(`{"duration_s": 20, "omit_s": 0, "parallel": 1, "window_bytes": 0,
		"reverse": false, "udp": false, "bitrate_bps": 0, "congestion": "", "mss": 0, "fq_rate_bps": 0, "port": 0,
		"path_rtt_ms": 148.2}`))
	if err != nil {
		t.Fatal(err)
	}
	if args := spec.Args("198.18.0.2", ""); args[slices.Index(args, "-p")+1] != "5201" || spec.Options().OmitS != 4 {
		t.Fatalf("server spec: args %v, options %+v", args, spec.Options())
	}
}

func TestDecodeSpecRefusesBadSpecs(t *testing.T) {
	bad := map[string]string{
		"unknown field":     `{"duraton_s": 10}`,
		"not an object":     `[1]`,
		"wrong type":        `{"duration_s": "ten"}`,
		"trailing data":     `{"duration_s": 10} {}`,
		"negative duration": `{"duration_s": -1}`,
		"endless":           `{"duration_s": 3600}`,
		"zero streams":      `{"parallel": 0}`,
		"too many streams":  `{"parallel": 1000}`,
		"udp without rate":  `{"udp": true}`,
		"negative omit":     `{"omit_s": -1}`,
		"tiny mss":          `{"mss": 10}`,
		"shell in cc":       `{"congestion": "cubic; rm -rf /"}`,
		"negative rtt":      `{"path_rtt_ms": -5}`,
		"negative port":     `{"port": -1}`,
		"port too high":     `{"port": 70000}`,
		"connect too short": `{"connect_timeout_ms": 1}`,
	}
	for name, raw := range bad {
		if _, err := DecodeSpec(json.RawMessage(raw)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// startServer runs `iperf3 -s` on a free loopback port until the test ends; it returns the
// port and a function that kills the server (to lose the peer mid-test).
func startServer(t *testing.T) (int, func()) {
	t.Helper()
	port, kill, _ := startReportingServer(t)
	return port, kill
}

// startReportingServer is startServer that also tells of each interval row the server
// prints, about one a second while a test runs: a test can wait for a run to be under way
// instead of guessing how long iperf3 takes to get there.
func startReportingServer(t *testing.T) (int, func(), <-chan struct{}) {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	port := freePort(t)
	// --forceflush: without a terminal iperf3 would keep its "listening" banner buffered.
	server := exec.Command("iperf3", "-s", "-B", "127.0.0.1", "-p", strconv.Itoa(port), "--forceflush")
	// The server dies with the test binary even when a timeout panic skips every cleanup.
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	listening := make(chan struct{})
	intervals := make(chan struct{}, 1024)
	go func() {
		// Waiting for the banner, not for a probe connection: iperf3 counts a connection
		// as a (failed) test and may still be resetting when the real client arrives.
		scanner := bufio.NewScanner(stdout)
		announced := false
		for scanner.Scan() {
			line := scanner.Text()
			if !announced && strings.Contains(line, "Server listening on") {
				close(listening)
				announced = true
			}
			// "[  5]   1.00-2.00   sec  1.84 GBytes  15.8 Gbits/sec", omitted ones too.
			if strings.HasPrefix(line, "[") && strings.Contains(line, " sec ") {
				select {
				case intervals <- struct{}{}:
				default:
				}
			}
		}
		_ = server.Wait()
		close(exited)
	}()
	kill := func() {
		_ = server.Process.Kill()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Error("iperf3 server did not exit after SIGKILL")
		}
	}
	// Cancel before wait: waiting first on a server that never exits is how this test
	// used to hang until go test's own timeout.
	t.Cleanup(kill)
	select {
	case <-listening:
	case <-exited:
		t.Fatal("iperf3 server exited at start")
	case <-time.After(5 * time.Second):
		t.Fatal("iperf3 server did not start")
	}
	return port, kill, intervals
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func loopbackTest(spec string) plan.Test {
	return plan.Test{
		ID: "throughput:peer", Type: TestType, IntervalS: 3600,
		Peer: plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Name: "peer", Address: "127.0.0.1"},
		Spec: json.RawMessage(spec),
	}
}

// testContext bounds a test that runs iperf3, so no failure mode can hang go test.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestRunAgainstARealIperf3Server(t *testing.T) {
	port, _ := startServer(t)
	ctx := testContext(t, 20*time.Second)
	p := New("iperf3")
	p.Slack = 10 * time.Second
	res := p.Run(ctx, loopbackTest(`{"duration_s": 1, "omit_s": 1, "port": `+strconv.Itoa(port)+`}`), "v7")
	if res.Status != result.StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Error)
	}
	o := res.Throughput
	if o.Protocol != "TCP" || o.Summary.ReceiverBitsPerS <= 0 || len(o.Intervals) == 0 || o.Iperf3Version == "" {
		t.Fatalf("outcome %+v", o)
	}
	if o.Options.DurationS != 1 || o.Options.OmitS != 1 || o.Options.Parallel != 1 || o.OmitS != 1 {
		t.Fatalf("options %+v, omit in iperf3's start %d", o.Options, o.OmitS)
	}
	if res.TestType != TestType || res.PlanVersion != "v7" || res.Target != "127.0.0.1" || !res.EndedAt.After(res.StartedAt) {
		t.Fatalf("result %+v", res)
	}
}

func TestRunClassifiesIperf3Errors(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	p := New("iperf3")
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	res := p.Run(ctx, loopbackTest(`{"duration_s": 1, "port": `+strconv.Itoa(freePort(t))+`}`), "")
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "iperf3 refused: ") ||
		!strings.Contains(res.Error, "Connection refused") || res.Throughput != nil {
		t.Fatalf("no server: %s %q", res.Status, res.Error)
	}

	// The server is killed once it has printed three interval rows, about 3 s into a 9 s
	// run: the client has measured intervals by then (its first ends at 1 s), and has
	// seconds left to run. A fixed sleep instead raced iperf3's start on a loaded machine.
	port, kill, intervals := startReportingServer(t)
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for range 3 {
			select {
			case <-intervals:
			case <-ctx.Done():
				return
			}
		}
		kill()
	}()
	res = p.Run(ctx, loopbackTest(`{"duration_s": 8, "omit_s": 1, "port": `+strconv.Itoa(port)+`}`), "")
	<-killed
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "iperf3 peer gone: ") {
		t.Fatalf("server killed mid-test: %s %q", res.Status, res.Error)
	}
	// What was measured before the server went is kept beside the error.
	if res.Throughput == nil || len(res.Throughput.Intervals) == 0 || res.Throughput.Options.DurationS != 8 {
		t.Fatalf("server killed mid-test lost its intervals: %+v", res.Throughput)
	}
	checkAgainstContract(t, res)
}

// A run stopped at its deadline is sent SIGTERM, on which iperf3 prints the JSON of what it
// measured so far; that part is kept in the failed result.
func TestRunStoppedAtItsDeadlineKeepsItsIntervals(t *testing.T) {
	port, _ := startServer(t)
	p := New("iperf3")
	p.Slack = 0
	began := time.Now()
	// A 5 s deadline leaves iperf3 seconds to start and still measure two intervals before
	// it; the 21 s run it stops is far from done then.
	res := p.Run(testContext(t, 5*time.Second), loopbackTest(`{"duration_s": 20, "omit_s": 1, "port": `+strconv.Itoa(port)+`}`), "")
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "iperf3 timeout: ") {
		t.Fatalf("stopped run: %s %q", res.Status, res.Error)
	}
	if res.Throughput == nil || len(res.Throughput.Intervals) < 2 || res.Throughput.Protocol != "TCP" {
		t.Fatalf("stopped run lost its intervals: %+v", res.Throughput)
	}
	// Stopped at the deadline, not left to run its 21 s.
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("stopping took %v", took)
	}
	checkAgainstContract(t, res)
}

// checkAgainstContract validates one result as a batch against the result contract.
func checkAgainstContract(t *testing.T, res result.Result) {
	t.Helper()
	data, err := json.Marshal(result.Batch{SchemaVersion: result.SchemaVersion, Results: []result.Result{res}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.Compile(t, "result-batch.v1.schema.json").Validate(doc); err != nil {
		t.Fatalf("a failed run with its partial measurement breaks the contract: %v", err)
	}
}

func TestRunThatCannotStartSaysWhy(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	notExecutable := filepath.Join(t.TempDir(), "iperf3")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, binary := range []string{"/nonexistent/iperf3", "no-such-iperf3-on-path", notExecutable} {
		res := New(binary).Run(ctx, loopbackTest(`{"duration_s": 1}`), "")
		if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "iperf3 cannot run: ") {
			t.Errorf("%s: %s %q", binary, res.Status, res.Error)
		}
	}
	res := New("iperf3").Run(ctx, loopbackTest(`{"duration_s": 0}`), "")
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "invalid throughput spec: duration_s 0") {
		t.Fatalf("invalid spec: %s %q", res.Status, res.Error)
	}
}

// hangingServer accepts connections and never answers, like an iperf3 server that froze.
func hangingServer(t *testing.T) (int, <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 16)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port, accepted
}

// manualDeadline is a context whose deadline passes when pass is called (or the test
// ends): its Err is then context.DeadlineExceeded, as a plan's deadline would give.
type manualDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newManualDeadline(t *testing.T) *manualDeadline {
	d := &manualDeadline{Context: context.Background(), done: make(chan struct{})}
	t.Cleanup(d.pass)
	return d
}

func (d *manualDeadline) pass()                 { d.once.Do(func() { close(d.done) }) }
func (d *manualDeadline) Done() <-chan struct{} { return d.done }

func (d *manualDeadline) Err() error {
	select {
	case <-d.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestASecondConcurrentRunFailsFastAndAHungRunTimesOut(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	port, accepted := hangingServer(t)
	p := New("iperf3")
	p.Slack = 30 * time.Second
	spec := `{"duration_s": 1, "omit_s": 1, "port": ` + strconv.Itoa(port) + `}`
	first := make(chan result.Result, 1)
	// The plan's deadline (the parent context) stops the hung run before Slack would. It
	// passes when the test says so, after the second run was refused: a clock deadline
	// would race the second run's start on a loaded machine.
	deadline := newManualDeadline(t)
	go func() { first <- p.Run(deadline, loopbackTest(spec), "") }()
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("iperf3 never connected")
	}

	// The first run hangs until its deadline is made to pass, so a second run that waited
	// for it instead of failing fast would never come back.
	secondDone := make(chan result.Result, 1)
	go func() { secondDone <- p.Run(testContext(t, 5*time.Second), loopbackTest(spec), "") }()
	var second result.Result
	select {
	case second = <-secondDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the second run waited for the hung one instead of failing fast")
	}
	if second.Status != result.StatusFailed || second.Error != "agent busy with another throughput test" {
		t.Fatalf("second run: %s %q", second.Status, second.Error)
	}

	deadline.pass()
	select {
	case res := <-first:
		if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "iperf3 timeout: ") {
			t.Fatalf("hung run: %s %q", res.Status, res.Error)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the hung run was not stopped")
	}
	// The guard is released: the next run gets to iperf3 again (and is cancelled there).
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-accepted; cancel() }()
	res := p.Run(ctx, loopbackTest(spec), "")
	cancel()
	if res.Status != result.StatusFailed || res.Error != "iperf3 cancelled (agent stopping)" {
		t.Fatalf("run after the guard: %s %q", res.Status, res.Error)
	}
}

func TestMeasureRefusesAnInvalidSpecDirectly(t *testing.T) {
	_, err := New("iperf3").Measure(context.Background(), Spec{DurationS: 0}, "127.0.0.1", nil)
	if err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("invalid spec: %v", err)
	}
}

// RawOut is handed iperf3's stdout byte for byte, beside the parsed section (fathom-lab
// probe throughput --raw-out keeps it in the lab corpus).
func TestRawOutGetsIperf3sStdout(t *testing.T) {
	doc, err := filepath.Abs("testdata/iperf3-3.12-tcp-single.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "iperf3")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec cat '"+doc+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := New(fake)
	var got [][]byte
	p.RawOut = func(stdout []byte) { got = append(got, bytes.Clone(stdout)) }
	res := p.Run(testContext(t, 10*time.Second), loopbackTest(`{"duration_s": 10}`), "")
	if res.Status != result.StatusOK || res.Throughput == nil || len(res.Throughput.Intervals) == 0 {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	if len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("RawOut got %d calls, first %.60q", len(got), got)
	}
}

func TestAStreamsProbeRunsItsStreamsAndSaysSo(t *testing.T) {
	spec, err := DecodeSpec(json.RawMessage(`{"parallel": 4, "streams_probe": true}`))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(spec.Args("198.18.0.2", ""), " ")
	if !strings.Contains(args, "-P 4") {
		t.Errorf("args %s: want -P 4", args)
	}
	encoded, _ := json.Marshal(spec.Options())
	if !strings.Contains(string(encoded), `"streams_probe":true`) {
		t.Errorf("options %s: want streams_probe", encoded)
	}
	// An ordinary run's options are byte for byte what they were before probes.
	ordinary, _ := DecodeSpec(json.RawMessage(`{"parallel": 4}`))
	if encoded, _ := json.Marshal(ordinary.Options()); strings.Contains(string(encoded), "streams_probe") {
		t.Errorf("options %s: an ordinary run is no probe", encoded)
	}
	// One stream, or UDP, compares nothing with the single-stream runs.
	for _, raw := range []string{`{"streams_probe": true}`, `{"parallel": 4, "udp": true, "bitrate_bps": 1000000, "streams_probe": true}`,
		`{"parallel": 4, "streams_probe": "yes"}`} {
		if _, err := DecodeSpec(json.RawMessage(raw)); err == nil {
			t.Errorf("%s accepted", raw)
		}
	}
}
