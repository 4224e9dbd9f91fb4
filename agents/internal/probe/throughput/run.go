package throughput

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/childproc"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// TestType is the plan's name for this probe.
const TestType = "throughput"

// MaxDurationS and MaxOmitS bound a run (the contract's throughput options): the longest
// test a peer's server ever has to serve.
const (
	MaxDurationS = 300
	MaxOmitS     = 60
)

// DefaultPort is where a peer agent's iperf3 server listens unless the spec says otherwise.
const DefaultPort = 5201

// ErrBusy is the reason a run is refused while this agent runs another throughput test.
var ErrBusy = errors.New("agent busy with another throughput test")

// Spec is a throughput test's options as the plan sends them.
type Spec struct {
	DurationS     int     `json:"duration_s"`
	OmitS         int     `json:"omit_s"` // 0: derived from the path RTT (OmitFor)
	Parallel      int     `json:"parallel"`
	WindowBytes   int     `json:"window_bytes"` // iperf3 -w; 0: autotuning
	Reverse       bool    `json:"reverse"`
	UDP           bool    `json:"udp"`
	BitrateBps    int64   `json:"bitrate_bps"` // UDP target rate (-b)
	Congestion    string  `json:"congestion"`
	MSS           int     `json:"mss"`
	FQRateBps     int64   `json:"fq_rate_bps"` // pacing (--fq-rate)
	Port          int     `json:"port"`        // 0: DefaultPort (the server's normalised specs send 0)
	PathRTTMs     float64 `json:"path_rtt_ms"` // for the omit default
	ConnectTimeMs int     `json:"connect_timeout_ms"`
	// RampBps, set by the server, makes the run a policer's UDP ramp: one UDP step per
	// rate, each duration_s long, back to back (ramp.go). Its rates replace bitrate_bps.
	RampBps []int64 `json:"ramp_bps"`
	// StreamsProbe, set by the server, marks a run of several TCP streams planned beside the
	// path's single-stream runs: the analysis compares them to tell a per-flow limit from the
	// path's. The agent runs it as any parallel run and says so in the result.
	StreamsProbe bool `json:"streams_probe"`
	// rampStep marks one step of a ramp (Spec.step): it omits nothing and paces finely.
	rampStep bool
}

// RampPacingTimerUs is how often a ramp step's sender releases datagrams (iperf3
// --pacing-timer, 1000 us by default). A policer with a small burst (seed 002: 8 KB) passes
// about one burst per release, so coarse releases would read far below its rate.
const RampPacingTimerUs = 100

// MaxRateBps bounds bitrate_bps and fq_rate_bps: 400 Gbit/s, the fastest Ethernet port.
const MaxRateBps = 400_000_000_000

// MaxRampSteps bounds a ramp (the contract's maxItems), and so how long its slot lasts.
const MaxRampSteps = 8

// MaxParallel caps streams: more would measure the hosts, not the path.
const MaxParallel = 128

// DefaultSpec is a 20 s single-stream TCP test, long enough to leave slow start behind on
// most paths once the omitted seconds are added.
func DefaultSpec() Spec {
	return Spec{DurationS: 20, Parallel: 1, Port: 0, ConnectTimeMs: 5000, RampBps: []int64{}}
}

// DecodeSpec reads a plan's spec over the defaults, refusing unknown fields, and validates it.
func DecodeSpec(raw json.RawMessage) (Spec, error) {
	spec := DefaultSpec()
	if err := probe.DecodeSpec(raw, &spec); err != nil {
		return spec, err
	}
	if spec.Port == 0 {
		spec.Port = DefaultPort
	}
	return spec, spec.Validate()
}

// Validate refuses options iperf3 would reject or that would make a run unbounded.
func (s Spec) Validate() error {
	switch {
	case s.DurationS < 1 || s.DurationS > MaxDurationS:
		return fmt.Errorf("duration_s %d out of range 1..%d", s.DurationS, MaxDurationS)
	case s.OmitS < 0 || s.OmitS > MaxOmitS:
		return fmt.Errorf("omit_s %d out of range 0..60 (0: derived from path_rtt_ms)", s.OmitS)
	case s.Parallel < 1 || s.Parallel > MaxParallel:
		return fmt.Errorf("parallel %d out of range 1..%d", s.Parallel, MaxParallel)
	case s.WindowBytes < 0 || s.WindowBytes > 1<<30:
		return fmt.Errorf("window_bytes %d out of range 0..1 GiB", s.WindowBytes)
	case s.BitrateBps < 0 || s.BitrateBps > MaxRateBps:
		return fmt.Errorf("bitrate_bps %d out of range 0..%d", s.BitrateBps, int64(MaxRateBps))
	case s.FQRateBps < 0 || s.FQRateBps > MaxRateBps:
		return fmt.Errorf("fq_rate_bps %d out of range 0..%d", s.FQRateBps, int64(MaxRateBps))
	case s.UDP && s.BitrateBps == 0 && len(s.RampBps) == 0:
		return errors.New("a UDP test needs bitrate_bps (iperf3's 1 Mbit/s default measures nothing)")
	case s.MSS != 0 && (s.MSS < 88 || s.MSS > 65495):
		return fmt.Errorf("mss %d out of range 88..65495", s.MSS)
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("port %d out of range 1..65535", s.Port)
	case s.PathRTTMs < 0 || math.IsNaN(s.PathRTTMs) || s.PathRTTMs > 10000:
		return fmt.Errorf("path_rtt_ms %v out of range 0..10000", s.PathRTTMs)
	case s.ConnectTimeMs < 100 || s.ConnectTimeMs > 60000:
		return fmt.Errorf("connect_timeout_ms %d out of range 100..60000", s.ConnectTimeMs)
	case len(s.Congestion) > 32:
		return fmt.Errorf("congestion %q is longer than 32 characters", s.Congestion)
	}
	for _, c := range s.Congestion {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("congestion %q is not an algorithm name", s.Congestion)
		}
	}
	if err := s.validateRamp(); err != nil {
		return err
	}
	if s.StreamsProbe && (s.UDP || s.Parallel < 2) {
		return fmt.Errorf("a streams probe runs several TCP streams: parallel %d, udp %t", s.Parallel, s.UDP)
	}
	return nil
}

// validateRamp refuses ramps that would not find a policer's rate: a ramp's steps must
// rise, and it is one UDP stream, so each step's loss is the path's, not the host's.
func (s Spec) validateRamp() error {
	if len(s.RampBps) == 0 {
		return nil
	}
	if len(s.RampBps) > MaxRampSteps {
		return fmt.Errorf("ramp_bps has %d rates, at most %d", len(s.RampBps), MaxRampSteps)
	}
	for i, rate := range s.RampBps {
		if rate < 1 || rate > MaxRateBps {
			return fmt.Errorf("ramp_bps[%d] %d out of range 1..%d", i, rate, int64(MaxRateBps))
		}
		if i > 0 && rate <= s.RampBps[i-1] {
			return fmt.Errorf("ramp_bps[%d] %d does not rise above %d (a ramp's rates rise)", i, rate, s.RampBps[i-1])
		}
	}
	if !s.UDP {
		return errors.New("a ramp (ramp_bps) is a UDP test: udp must be true")
	}
	if s.Parallel != 1 {
		return fmt.Errorf("a ramp (ramp_bps) runs one stream: parallel %d must be 1", s.Parallel)
	}
	return nil
}

// OmitFor is how long to leave out of the measurement so slow start is over: two slow-start
// rounds' worth of RTTs to reach the window (doubling from 10 segments), at least 2 s.
func OmitFor(rtt time.Duration, windowBytes, mss int) int {
	if windowBytes <= 0 {
		windowBytes = 64 << 20 // autotuning can reach tens of MiB
	}
	if mss <= 0 {
		mss = 1448
	}
	rounds := math.Ceil(math.Log2(math.Max(1, float64(windowBytes)/float64(10*mss))))
	seconds := 2 * rounds * rtt.Seconds()
	return int(math.Min(60, math.Max(2, math.Ceil(seconds))))
}

// Omit is the omit the run uses: the spec's, or the one its path RTT calls for.
func (s Spec) Omit() int {
	// A UDP ramp omits nothing: UDP has no slow start, a policer's burst is milliseconds of
	// a step, and iperf3 miscounts UDP loss across --omit (more lost than sent).
	if s.rampStep || len(s.RampBps) > 0 {
		return 0
	}
	if s.OmitS > 0 {
		return s.OmitS
	}
	return OmitFor(time.Duration(s.PathRTTMs*float64(time.Millisecond)), s.WindowBytes, s.MSS)
}

// Options are the options a run used, as the result records them.
func (s Spec) Options() result.ThroughputOptions {
	return result.ThroughputOptions{
		DurationS: s.DurationS, OmitS: s.Omit(), Parallel: s.Parallel, WindowBytes: s.WindowBytes,
		Reverse: s.Reverse, UDP: s.UDP, BitrateBps: s.BitrateBps, Congestion: s.Congestion, MSS: s.MSS,
		FQRateBps: s.FQRateBps, RampBps: s.RampBps, StreamsProbe: s.StreamsProbe,
	}
}

// Args is iperf3's command line for a run against address, from bind when not empty.
func (s Spec) Args(address, bind string) []string {
	port := s.Port
	if port == 0 {
		port = DefaultPort
	}
	connect := s.ConnectTimeMs
	if connect == 0 {
		connect = 5000
	}
	host, family := probe.Target(address)
	args := []string{"-c", host, "-p", strconv.Itoa(port), "-J", "-t", strconv.Itoa(s.DurationS),
		"-O", strconv.Itoa(s.Omit()), "--connect-timeout", strconv.Itoa(connect)}
	args = append(args, probe.FamilyFlag(family)...)
	if bind != "" {
		args = append(args, "-B", bind)
	}
	if s.Parallel > 1 {
		args = append(args, "-P", strconv.Itoa(s.Parallel))
	}
	if s.WindowBytes > 0 {
		args = append(args, "-w", strconv.Itoa(s.WindowBytes))
	}
	if s.Reverse {
		args = append(args, "-R")
	}
	if s.Reverse && !s.UDP && !s.rampStep && len(s.RampBps) == 0 {
		// The client of a reverse TCP run receives and has no TCP_INFO of the sending side
		// (RTT, windows): the server's own JSON has it, when the server runs with -J (parse.go).
		args = append(args, "--get-server-output")
	}
	if s.UDP {
		args = append(args, "-u", "-b", strconv.FormatInt(s.BitrateBps, 10))
	}
	if s.rampStep {
		args = append(args, "--pacing-timer", strconv.Itoa(RampPacingTimerUs))
	}
	if s.Congestion != "" {
		args = append(args, "-C", s.Congestion)
	}
	if s.MSS > 0 {
		args = append(args, "-M", strconv.Itoa(s.MSS))
	}
	if s.FQRateBps > 0 {
		args = append(args, "--fq-rate", strconv.FormatInt(s.FQRateBps, 10))
	}
	return args
}

// Prober runs iperf3 as a client against a peer's iperf3 server. One Prober is one agent's
// throughput probe: it runs one test at a time, because two tests from one host would
// share its NIC and each would measure the other.
type Prober struct {
	Binary string
	Now    func() time.Time
	// Bind is iperf3 -B, the local address to test from; empty lets the kernel choose.
	Bind string
	// Slack is how long past its duration and omit a run may take before it is killed
	// (connection setup, the results exchange, a server that stopped answering).
	Slack time.Duration
	// RawOut, when set, is given what each iperf3 run printed on stdout (its -J document,
	// also of a failed or stopped run; one call per step of a ramp), so a lab corpus can keep
	// the tool's own output beside the parsed section. nil in the agent.
	RawOut func(stdout []byte)
	busy   atomic.Bool
}

// New returns a prober running binary.
func New(binary string) *Prober {
	return &Prober{Binary: binary, Now: time.Now, Slack: 30 * time.Second}
}

// Run measures throughput to the test's peer and returns the result.
func (p *Prober) Run(ctx context.Context, test plan.Test, planVersion string) result.Result {
	res := result.New(TestType, test.ID, planVersion, test.Peer.Address, test.Peer.ID, p.Now())
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		res.Fail("invalid throughput spec: " + err.Error())
		return res
	}
	outcome, err := p.Measure(ctx, spec, test.Peer.Address, test.Iperf3Auth)
	res.EndedAt = p.Now().UTC()
	if err != nil {
		res.Fail(err.Error())
		if len(outcome.Intervals) > 0 {
			// A run that broke off is failed, with the error, but keeps what it measured
			// (the contract lets a failed result carry its section).
			res.Throughput = &outcome
		}
		return res
	}
	res.Throughput = &outcome
	return res
}

// Measure runs one test against address, presenting auth to its server when not nil: one
// iperf3 run, or for a ramp (spec.RampBps) one per step. iperf3's own errors, and runs it
// had to stop, come back as *RunError (for a ramp wrapped in the step's error); a run
// refused because another is under way as ErrBusy. With an error, the outcome holds the
// intervals measured before the run broke off, if any.
func (p *Prober) Measure(ctx context.Context, spec Spec, address string, auth *plan.Iperf3Auth) (result.Throughput, error) {
	if err := spec.Validate(); err != nil {
		return result.Throughput{}, fmt.Errorf("invalid throughput spec: %w", err)
	}
	if err := sameFamily(address, p.Bind); err != nil {
		return result.Throughput{}, err
	}
	if !p.busy.CompareAndSwap(false, true) {
		return result.Throughput{}, ErrBusy
	}
	// A ramp's steps hold the guard together: they are one slot of this host's NIC.
	defer p.busy.Store(false)
	if len(spec.RampBps) > 0 {
		return p.ramp(ctx, spec, address, auth)
	}
	return p.once(ctx, spec, address, auth)
}

// once is one iperf3 run, its own timeout included; the caller holds the busy guard.
func (p *Prober) once(ctx context.Context, spec Spec, address string, auth *plan.Iperf3Auth) (result.Throughput, error) {
	limit := time.Duration(spec.DurationS+spec.Omit())*time.Second + p.Slack
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	args := spec.Args(address, p.Bind)
	env := childproc.Env()
	if auth != nil {
		keyFile, err := writePublicKey(auth.PublicKey)
		if err != nil {
			return result.Throughput{}, fmt.Errorf("iperf3 cannot run: the peer's public key: %w", err)
		}
		defer os.Remove(keyFile)
		// The password goes by environment, never on a command line others can read.
		args = append(args, "--username", auth.Username, "--rsa-public-key-path", keyFile)
		env = append(env, "IPERF3_PASSWORD="+auth.Password)
	}
	cmd := childproc.Command(runCtx, p.Binary, args...)
	cmd.Env = env
	// Stopped with SIGTERM, iperf3 still prints its JSON with every interval so far (with
	// SIGKILL, nothing). One that does not exit is killed after WaitDelay, which also keeps
	// Wait from hanging on pipes a stray child kept open.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	runErr := cmd.Run()
	if p.RawOut != nil {
		p.RawOut(stdout.Bytes())
	}

	var execErr *exec.Error
	switch {
	case errors.As(runErr, &execErr), errors.Is(runErr, fs.ErrNotExist), errors.Is(runErr, fs.ErrPermission):
		return result.Throughput{}, fmt.Errorf("iperf3 cannot run: %w", runErr)
	case errors.Is(ctx.Err(), context.Canceled):
		return partial(stdout.Bytes(), spec), errors.New("iperf3 cancelled (agent stopping)")
	case runCtx.Err() != nil:
		return partial(stdout.Bytes(), spec), &RunError{Class: "timeout", Message: fmt.Sprintf(
			"iperf3 did not finish in time and was stopped after %s (server or path stopped answering)",
			time.Since(began).Round(100*time.Millisecond))}
	}
	outcome, err := Parse(stdout.Bytes())
	outcome.Options = spec.Options()
	if errors.Is(err, ErrNotIperf3JSON) {
		detail := strings.TrimSpace(stderr.String())
		if detail == "" {
			detail = err.Error()
		}
		if runErr != nil {
			return result.Throughput{}, fmt.Errorf("iperf3 failed (%v): %s", runErr, truncate(detail, 300))
		}
		return result.Throughput{}, fmt.Errorf("iperf3 printed no usable JSON: %s", truncate(detail, 300))
	}
	if err != nil {
		return outcome, err
	}
	return outcome, nil
}

// writePublicKey puts the peer's key where iperf3 --rsa-public-key-path reads it.
func writePublicKey(pem string) (string, error) {
	file, err := os.CreateTemp("", "fathom-iperf3-peer-*.pem")
	if err != nil {
		return "", err
	}
	if _, err := file.WriteString(pem); err != nil {
		file.Close()
		os.Remove(file.Name())
		return "", err
	}
	return file.Name(), file.Close()
}

// sameFamily refuses a bind address of the other family than a literal peer address: iperf3
// would only say "Invalid argument".
func sameFamily(address, bind string) error {
	_, peer := probe.Target(address)
	_, local := probe.Target(bind)
	if peer != 0 && local != 0 && peer != local {
		return fmt.Errorf("iperf3 cannot run: bind address %s is IPv%d, peer %s is IPv%d", bind, local, address, peer)
	}
	return nil
}

// partial is what a stopped iperf3 printed of its run, or nothing.
func partial(stdout []byte, spec Spec) result.Throughput {
	outcome, _ := Parse(stdout)
	if len(outcome.Intervals) == 0 {
		return result.Throughput{}
	}
	outcome.Options = spec.Options()
	return outcome
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
