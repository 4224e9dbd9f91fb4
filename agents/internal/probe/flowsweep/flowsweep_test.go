package flowsweep

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/echo"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func TestDecodeSpecDefaultsAndValidation(t *testing.T) {
	spec, err := DecodeSpec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if spec != (Spec{Protocol: "udp", Port: 5202, Flows: 16, SamplesPerFlow: 10, IntervalMs: 20, TimeoutMs: 1000}) {
		t.Fatalf("defaults %+v", spec)
	}
	if spec, err = DecodeSpec(json.RawMessage(`{"protocol": "tcp", "port": 22, "flows": 2}`)); err != nil ||
		spec.Protocol != "tcp" || spec.Port != 22 || spec.Flows != 2 || spec.SamplesPerFlow != 10 {
		t.Fatalf("partial spec: %+v %v", spec, err)
	}
	// What the server sends: its normalised spec, every option present, port 0 for the default.
	if spec, err = DecodeSpec(json.RawMessage(`{"protocol": "udp", "port": 0, "flows": 16, "samples_per_flow": 10,
		"interval_ms": 20, "timeout_ms": 1000}`)); err != nil || spec.Port != 5202 {
		t.Fatalf("server spec: %+v %v", spec, err)
	}
	bad := map[string]struct{ spec, want string }{
		"unknown field":      {`{"flow": 4}`, `unknown field "flow"`},
		"not an object":      {`[]`, "cannot unmarshal"},
		"trailing data":      {`{} {}`, "trailing data"},
		"protocol":           {`{"protocol": "icmp"}`, `protocol "icmp" is not udp or tcp`},
		"negative port":      {`{"port": -1}`, "port -1 out of range 1..65535"},
		"port too high":      {`{"port": 65536}`, "port 65536 out of range"},
		"one flow":           {`{"flows": 1}`, "flows 1 out of range 2..64"},
		"too many flows":     {`{"flows": 65}`, "flows 65 out of range 2..64"},
		"no samples":         {`{"samples_per_flow": 0}`, "samples_per_flow 0 out of range 1..100"},
		"too many samples":   {`{"samples_per_flow": 101}`, "samples_per_flow 101 out of range"},
		"interval zero":      {`{"interval_ms": 0}`, "interval_ms 0 out of range 1..1000"},
		"interval too long":  {`{"interval_ms": 1001}`, "interval_ms 1001 out of range"},
		"timeout too short":  {`{"timeout_ms": 10}`, "timeout_ms 10 out of range 100..60000"},
		"timeout too long":   {`{"timeout_ms": 600000}`, "timeout_ms 600000 out of range"},
		"round too long":     {`{"flows": 64, "samples_per_flow": 100, "interval_ms": 1000}`, "over the 600000 ms a round may take"},
		"flows not a number": {`{"flows": "many"}`, "cannot unmarshal"},
	}
	for name, tc := range bad {
		if _, err := DecodeSpec(json.RawMessage(tc.spec)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startResponder runs the agents' real echo responder on a loopback port until stop or the
// end of the test.
func startResponder(t *testing.T) (port int, stop func()) {
	t.Helper()
	r := echo.New(0, "127.0.0.1", quietLog())
	ready := make(chan net.Addr, 1)
	r.Ready = func(a net.Addr) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("responder did not stop")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case a := <-ready:
		return a.(*net.UDPAddr).Port, stop
	case <-time.After(5 * time.Second):
		t.Fatal("responder did not start")
		return 0, nil
	}
}

func sweepTest(spec string) plan.Test {
	return plan.Test{
		ID: "flowsweep:peer", Type: TestType, IntervalS: 60,
		Peer: plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Name: "peer", Address: "127.0.0.1"},
		Spec: json.RawMessage(spec),
	}
}

func run(t *testing.T, spec string) result.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return New().Run(ctx, sweepTest(spec), "v3")
}

// checkShape asserts the round-robin order and one stable, distinct source port per flow.
func checkShape(t *testing.T, fs *result.FlowSweep) {
	t.Helper()
	if len(fs.Samples) != fs.Flows*fs.SamplesPerFlow {
		t.Fatalf("%d samples for %d x %d", len(fs.Samples), fs.Flows, fs.SamplesPerFlow)
	}
	portOf := map[int]int{}
	flowOf := map[int]int{}
	for k, s := range fs.Samples {
		if s.Flow != k%fs.Flows || s.Seq != k/fs.Flows {
			t.Fatalf("sample %d is flow %d seq %d: not round-robin", k, s.Flow, s.Seq)
		}
		// TCP handshakes start on goroutines of their own, so a loaded machine may start
		// probe k a little after probe k+1; UDP probes leave one sender in order.
		if fs.Protocol == "udp" && k > 0 && s.Time.Before(fs.Samples[k-1].Time) {
			t.Fatalf("sample %d sent before sample %d", k, k-1)
		}
		if s.SrcPort < 1 || s.SrcPort > 65535 {
			t.Fatalf("sample %d src port %d", k, s.SrcPort)
		}
		if p, ok := portOf[s.Flow]; ok && p != s.SrcPort {
			t.Fatalf("flow %d changed port %d -> %d", s.Flow, p, s.SrcPort)
		}
		if f, ok := flowOf[s.SrcPort]; ok && f != s.Flow {
			t.Fatalf("flows %d and %d share port %d", f, s.Flow, s.SrcPort)
		}
		portOf[s.Flow], flowOf[s.SrcPort] = s.SrcPort, s.Flow
	}
}

// The timeouts of sweeps whose probes are all answered are seconds: an answer that is
// expected must not be lost to a loaded machine's scheduling. A UDP sweep waits out its
// timeout after the last probe; a TCP sweep only as long as its handshakes take.

func TestUDPSweepAgainstTheRealResponder(t *testing.T) {
	port, _ := startResponder(t)
	res := run(t, `{"port": `+strconv.Itoa(port)+`, "flows": 4, "samples_per_flow": 3, "interval_ms": 5, "timeout_ms": 3000}`)
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	fs := res.FlowSweep
	if fs.Protocol != "udp" || fs.Port != port || fs.Flows != 4 || fs.SamplesPerFlow != 3 || fs.IntervalMs != 5 {
		t.Fatalf("sweep %+v", fs)
	}
	checkShape(t, fs)
	for k, s := range fs.Samples {
		if s.RTTMs == nil || *s.RTTMs <= 0 || *s.RTTMs > 3000 || s.Error != "" {
			t.Fatalf("sample %d: %+v", k, s)
		}
	}
	// Not before the intervals (timers never fire early); the bound above only catches a
	// sweep that took seconds per interval.
	if span := fs.Samples[11].Time.Sub(fs.Samples[0].Time); span < 50*time.Millisecond || span > 5*time.Second {
		t.Fatalf("11 intervals of 5 ms took %v", span)
	}
}

func TestStoppedResponderMeansLostSamples(t *testing.T) {
	port, stop := startResponder(t)
	stop()
	began := time.Now()
	res := run(t, `{"port": `+strconv.Itoa(port)+`, "flows": 2, "samples_per_flow": 2, "interval_ms": 5, "timeout_ms": 200}`)
	if res.Status != result.StatusOK {
		t.Fatalf("lost samples are data, not a failure: %s %s", res.Status, res.Error)
	}
	checkShape(t, res.FlowSweep)
	// The kernel answers a closed port with ICMP port unreachable, but rate-limits those
	// (net.ipv4.icmp_ratelimit); once limited, a probe simply goes unanswered.
	for k, s := range res.FlowSweep.Samples {
		if s.RTTMs != nil || !(strings.Contains(s.Error, "port unreachable") || strings.Contains(s.Error, "no echo within")) {
			t.Fatalf("sample %d: %+v", k, s)
		}
	}
	// Lost probes cost their 200 ms timeout, not the run's 20 s context.
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("sweep took %v", took)
	}
}

// fakePeer answers like a responder, but only the probes keep allows, after delay, and
// sends a few replies that must not count alongside.
func fakePeer(t *testing.T, keep func(p echo.Packet) bool, delay time.Duration) int {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			req, err := echo.Decode(buf[:n])
			if err != nil || !keep(req) {
				continue
			}
			go func(req echo.Packet) {
				time.Sleep(delay)
				junk := [][]byte{
					[]byte("not an echo at all"),
					echo.Packet{Reply: true, Round: req.Round + 1, Flow: req.Flow, Seq: req.Seq, SentNs: req.SentNs}.Marshal(24),
					echo.Packet{Reply: true, Round: req.Round, Flow: req.Flow + 1, Seq: req.Seq, SentNs: req.SentNs}.Marshal(24),
					echo.Packet{Reply: true, Round: req.Round, Flow: req.Flow, Seq: 999, SentNs: req.SentNs}.Marshal(24),
					echo.Packet{Reply: true, Round: req.Round, Flow: req.Flow, Seq: req.Seq, SentNs: req.SentNs + 1}.Marshal(24),
					echo.Packet{Round: req.Round, Flow: req.Flow, Seq: req.Seq, SentNs: req.SentNs}.Marshal(24), // a request
				}
				for _, j := range junk {
					_, _ = conn.WriteToUDPAddrPort(j, from)
				}
				reply := req
				reply.Reply = true
				_, _ = conn.WriteToUDPAddrPort(reply.Marshal(24), from)
				_, _ = conn.WriteToUDPAddrPort(reply.Marshal(24), from) // a duplicate
			}(req)
		}
	}()
	return conn.LocalAddr().(*net.UDPAddr).Port
}

func TestOnlyTimelyAnswersToOurOwnProbesCount(t *testing.T) {
	// The peer drops flow 1's probes and seq 1 of every flow; everything else is answered
	// amid junk, wrong rounds, wrong flows and duplicates.
	port := fakePeer(t, func(p echo.Packet) bool { return p.Flow != 1 && p.Seq != 1 }, 0)
	res := run(t, `{"port": `+strconv.Itoa(port)+`, "flows": 3, "samples_per_flow": 3, "interval_ms": 5, "timeout_ms": 3000}`)
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	checkShape(t, res.FlowSweep)
	for k, s := range res.FlowSweep.Samples {
		wantAnswer := s.Flow != 1 && s.Seq != 1
		wantError := ""
		if !wantAnswer {
			wantError = "no echo within 3000 ms"
		}
		if (s.RTTMs != nil) != wantAnswer || s.Error != wantError {
			t.Errorf("sample %d (flow %d seq %d): rtt %v error %q", k, s.Flow, s.Seq, s.RTTMs, s.Error)
		}
	}
}

func TestAnswersAfterTheTimeoutAreLost(t *testing.T) {
	port := fakePeer(t, func(echo.Packet) bool { return true }, 400*time.Millisecond)
	res := run(t, `{"port": `+strconv.Itoa(port)+`, "flows": 2, "samples_per_flow": 1, "interval_ms": 1, "timeout_ms": 150}`)
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	for k, s := range res.FlowSweep.Samples {
		if s.RTTMs != nil || s.Error != "no echo within 150 ms" {
			t.Fatalf("sample %d answered after 400 ms with a 150 ms timeout: %v %q", k, s.RTTMs, s.Error)
		}
	}
}

func TestTCPSweepTimesHandshakesFromFixedPorts(t *testing.T) {
	port, _ := startResponder(t) // the responder also completes TCP handshakes
	res := run(t, `{"protocol": "tcp", "port": `+strconv.Itoa(port)+`, "flows": 3, "samples_per_flow": 3, "interval_ms": 5, "timeout_ms": 5000}`)
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	fs := res.FlowSweep
	if fs.Protocol != "tcp" {
		t.Fatalf("protocol %q", fs.Protocol)
	}
	checkShape(t, fs)
	for k, s := range fs.Samples {
		if s.RTTMs == nil || *s.RTTMs <= 0 || s.Error != "" {
			t.Fatalf("sample %d: %+v", k, s)
		}
	}
}

func TestTCPSweepToAClosedPortRecordsRefusals(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	res := run(t, `{"protocol": "tcp", "port": `+strconv.Itoa(port)+`, "flows": 2, "samples_per_flow": 2, "interval_ms": 2, "timeout_ms": 5000}`)
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	checkShape(t, res.FlowSweep)
	for k, s := range res.FlowSweep.Samples {
		if s.RTTMs != nil || s.Error != "connection refused" {
			t.Fatalf("sample %d: %+v", k, s)
		}
	}
}

func TestReservedPortsAreDistinctAndReusable(t *testing.T) {
	ports, release, err := reservePorts(false, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p == 0 {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
	// A socket that does not opt in to sharing cannot take a reserved port.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: ports[0]}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("binding reserved port %d: %v, want EADDRINUSE", ports[0], err)
	}
}

func TestFailuresAndCancellation(t *testing.T) {
	res := run(t, `{"flows": 0}`)
	if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "invalid flowsweep spec: flows 0") {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	bad := sweepTest(`{"flows": 2, "samples_per_flow": 1}`)
	bad.Peer.Address = "127.0.0.1]" // refused by syntax, before any lookup
	if res := New().Run(context.Background(), bad, ""); res.Status != result.StatusFailed ||
		!strings.Contains(res.Error, "cannot resolve") {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	port, _ := startResponder(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	res = New().Run(ctx, sweepTest(`{"port": `+strconv.Itoa(port)+`, "interval_ms": 100}`), "")
	if res.Status != result.StatusFailed || res.Error != "flowsweep cancelled (agent stopping)" || res.FlowSweep != nil {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	// The round would take 16 s: well within that is prompt, however loaded the machine.
	if took := time.Since(began); took > 8*time.Second {
		t.Fatalf("cancel took %v", took)
	}
}

func TestTCPSweepOverIPv6(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	test := sweepTest(`{"protocol": "tcp", "port": ` + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + `, "flows": 2, "samples_per_flow": 2, "interval_ms": 2, "timeout_ms": 5000}`)
	test.Peer.Address = "[::1]" // URL notation: JoinHostPort must not bracket it twice
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := New().Run(ctx, test, "")
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	checkShape(t, res.FlowSweep)
	for k, s := range res.FlowSweep.Samples {
		if s.RTTMs == nil || s.Error != "" {
			t.Fatalf("sample %d: %+v", k, s)
		}
	}
}
