package labcli

// The agent's own measurements, run once in the current network namespace (`fathom-lab exec
// HOST -- fathom-lab probe ...`), so the lab's corpus records exactly what a Fathom agent
// would report: its probers, host facts, echo responder and iperf3 parser, unchanged.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/google/uuid"

	"github.com/fathom-net/fathom/agents/internal/agent"
	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/echo"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe/flowsweep"
	"github.com/fathom-net/fathom/agents/internal/probe/hostfacts"
	"github.com/fathom-net/fathom/agents/internal/probe/latency"
	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/probe/throughput"
	"github.com/fathom-net/fathom/agents/internal/probe/trace"
)

// labVersion is the agent_version the lab's host facts report.
const labVersion = "lab"

// stdin is what iperf3-result reads; tests replace it.
var stdin io.Reader = os.Stdin

// usageError is a command line the verb cannot run: Main exits 2 with its one line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// parseFlags parses a verb's flags, with errors as one usage line instead of flag's help dump.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return usagef("%s: %v (see fathom-lab help)", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// specDecoders check a spec before it runs: a typo in a lab script is a usage error, not a
// failed measurement in the corpus (the agent itself would report it as a failed run).
var specDecoders = map[string]func(json.RawMessage) error{
	ping.TestType:       func(raw json.RawMessage) error { _, err := ping.DecodeSpec(raw); return err },
	flowsweep.TestType:  func(raw json.RawMessage) error { _, err := flowsweep.DecodeSpec(raw); return err },
	trace.TestType:      func(raw json.RawMessage) error { _, err := trace.DecodeSpec(raw); return err },
	throughput.TestType: func(raw json.RawMessage) error { _, err := throughput.DecodeSpec(raw); return err },
	latency.TestType:    func(raw json.RawMessage) error { _, err := latency.DecodeSpec(raw); return err },
}

func writeJSON(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// probeCmd is `probe hostfacts` and `probe KIND --target ADDR ...`.
func probeCmd(args []string, stdout, _ io.Writer) error {
	cfg := config.Defaults()
	// The lab's hosts are namespaces of one kernel: their latency packets declare its clock
	// as the one both ends read.
	cfg.Twamp.ClockShared = true
	registry := agent.Probes(cfg)
	kinds := []string{"hostfacts"}
	for kind := range registry {
		kinds = append(kinds, kind)
	}
	slices.Sort(kinds)
	if len(args) == 0 {
		return usagef("probe needs a kind: %s", strings.Join(kinds, ", "))
	}
	kind := args[0]
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if kind == "hostfacts" {
		if err := parseFlags(flag.NewFlagSet("probe hostfacts", flag.ContinueOnError), args[1:]); err != nil {
			return err
		}
		// As agent.New: the iperf3 server's port, since it is enabled by default. No public
		// key: the lab runs no authenticated iperf3 server.
		return writeJSON(stdout, hostfacts.New(labVersion, cfg.Iperf3.Binary, cfg.Iperf3.Port, cfg.Twamp.ClockShared).Collect(ctx))
	}
	prober, ok := registry[kind]
	if !ok {
		return usagef("probe: unknown kind %q (one of %s)", kind, strings.Join(kinds, ", "))
	}
	var target, spec, peerID, testID, rawOut string
	fs := flag.NewFlagSet("probe "+kind, flag.ContinueOnError)
	fs.StringVar(&target, "target", "", "the peer's address")
	fs.StringVar(&spec, "spec", "", "the test's spec (JSON); empty: the kind's defaults")
	fs.StringVar(&peerID, "peer-id", "", "the peer agent's id (UUID); empty: a target without an agent")
	fs.StringVar(&testID, "test-id", "lab-"+kind, "the plan entry's id the result names")
	if kind == throughput.TestType {
		fs.StringVar(&rawOut, "raw-out", "", "also write iperf3's -J output to this file")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	switch {
	case target == "":
		return usagef("probe %s: --target ADDR is required", kind)
	case testID == "":
		return usagef("probe %s: --test-id must not be empty", kind)
	case spec != "" && !json.Valid([]byte(spec)):
		return usagef("probe %s: --spec is not JSON: %s", kind, spec)
	case peerID != "" && uuid.Validate(peerID) != nil:
		return usagef("probe %s: --peer-id %q is not a UUID", kind, peerID)
	}
	if err := specDecoders[kind](json.RawMessage(spec)); err != nil {
		return usagef("probe %s: invalid --spec: %v", kind, err)
	}
	var raw bytes.Buffer
	if rawOut != "" {
		// One -J document per iperf3 run: one for a test, one after another for a ramp's steps.
		prober.(*throughput.Prober).RawOut = func(stdout []byte) { raw.Write(stdout) }
	}
	test := plan.Test{ID: testID, Type: kind, Peer: plan.Peer{ID: peerID, Address: target}}
	if spec != "" {
		test.Spec = json.RawMessage(spec)
	}
	res := prober.Run(ctx, test, "")
	if err := writeJSON(stdout, res); err != nil {
		return err
	}
	if rawOut != "" {
		if err := os.WriteFile(rawOut, raw.Bytes(), 0o644); err != nil {
			return fmt.Errorf("the result is printed but iperf3's output is not kept: %w", err)
		}
	}
	if ctx.Err() != nil {
		// The agent drops a run its shutdown cut short: it is no measurement.
		return errors.New("stopped by a signal: the agent would not have reported this run")
	}
	return nil
}

// responder runs the agent's echo responder in the foreground until SIGTERM or SIGINT.
// Its limits stay the agent's (1000 replies/s and a burst of 1000 per source, 10000/s in
// all): they answer the fastest sweep a plan can hold, so far more than a lab's 16 flows x
// 10 samples every 20 ms.
func responder(args []string, stdout, stderr io.Writer) error {
	var listen string
	var port int
	fs := flag.NewFlagSet("responder", flag.ContinueOnError)
	fs.StringVar(&listen, "listen", "", "address to listen on; empty: all")
	fs.IntVar(&port, "port", echo.DefaultPort, "UDP and TCP port")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if port < 1 || port > 65535 {
		return usagef("responder: --port %d out of range 1..65535", port)
	}
	// The responder retries a port it cannot have for ever; a lab script wants to know now.
	address := net.JoinHostPort(listen, strconv.Itoa(port))
	if err := canListen(address); err != nil {
		return fmt.Errorf("responder cannot listen on %s: %w", address, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r := echo.New(port, listen, logger(stderr))
	var ready sync.Once
	// os.Stdout is unbuffered: the line is out when Fprintln returns.
	r.Ready = func(net.Addr) { ready.Do(func() { fmt.Fprintln(stdout, "ready") }) }
	r.Run(ctx)
	return nil
}

func canListen(address string) error {
	udp, err := net.ListenPacket("udp", address)
	if err != nil {
		return err
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp", address)
	if err != nil {
		return err
	}
	return tcp.Close()
}

// iperf3Result prints the throughput section the agent's parser makes of iperf3 -J output.
func iperf3Result(args []string, stdout, _ io.Writer) error {
	var spec string
	fs := flag.NewFlagSet("iperf3-result", flag.ContinueOnError)
	fs.StringVar(&spec, "spec", "", "the test's spec (JSON), for the options the agent records; empty: none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var options *throughput.Spec
	if spec != "" {
		decoded, err := throughput.DecodeSpec(json.RawMessage(spec))
		if err != nil {
			return usagef("iperf3-result: invalid --spec: %v", err)
		}
		options = &decoded
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	section, err := throughput.Parse(data)
	if options != nil && (err == nil || len(section.Intervals) > 0) {
		section.Options = options.Options() // as the prober does after parsing
	}
	if err == nil || len(section.Intervals) > 0 {
		if werr := writeJSON(stdout, section); werr != nil {
			return werr
		}
	}
	return err
}
