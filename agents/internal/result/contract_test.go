package result_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fathom-net/fathom/agents/internal/contract"
	"github.com/fathom-net/fathom/agents/internal/echo"
	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe/flowsweep"
	"github.com/fathom-net/fathom/agents/internal/probe/latency"
	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/probe/throughput"
	"github.com/fathom-net/fathom/agents/internal/probe/trace"
	"github.com/fathom-net/fathom/agents/internal/reflector"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return contract.Compile(t, "result-batch.v1.schema.json")
}

func validate(t *testing.T, schema *jsonschema.Schema, data []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return schema.Validate(doc)
}

func TestValidExamplesRoundTripThroughTheGoTypes(t *testing.T) {
	schema := compileSchema(t)
	files, _ := filepath.Glob(filepath.Join(contract.Dir(t), "examples", "result-batch", "valid", "*.json"))
	if len(files) < 4 {
		t.Fatalf("only %d valid examples", len(files))
	}
	for _, file := range files {
		data, _ := os.ReadFile(file)
		decoder := json.NewDecoder(bytes.NewReader(data))
		decoder.DisallowUnknownFields()
		var batch result.Batch
		if err := decoder.Decode(&batch); err != nil {
			t.Fatalf("%s does not fit the Go types: %v", filepath.Base(file), err)
		}
		encoded, _ := json.Marshal(batch)
		if err := validate(t, schema, encoded); err != nil {
			t.Fatalf("%s re-encoded breaks the schema: %v", filepath.Base(file), err)
		}
	}
}

func TestInvalidExamplesFailTheSchema(t *testing.T) {
	schema := compileSchema(t)
	files, _ := filepath.Glob(filepath.Join(contract.Dir(t), "examples", "result-batch", "invalid", "*.json"))
	if len(files) < 10 {
		t.Fatalf("only %d invalid examples", len(files))
	}
	for _, file := range files {
		data, _ := os.ReadFile(file)
		var example struct {
			Expect string          `json:"_expect_error_contains"`
			Batch  json.RawMessage `json:"batch"`
		}
		if err := json.Unmarshal(data, &example); err != nil {
			t.Fatal(err)
		}
		err := validate(t, schema, example.Batch)
		if err == nil {
			t.Fatalf("%s passed the schema", filepath.Base(file))
		}
		if !strings.Contains(err.Error(), example.Expect) {
			t.Fatalf("%s: error does not name %q: %v", filepath.Base(file), example.Expect, err)
		}
	}
}

func TestProbeResultsFromRealOutputsFitTheSchema(t *testing.T) {
	schema := compileSchema(t)
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	newResult := func(testType string) result.Result {
		r := result.New(testType, testType+":x", "v", "198.18.1.2", "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", start)
		r.EndedAt = start.Add(5 * time.Second)
		return r
	}
	check := func(t *testing.T, name string, r result.Result) {
		t.Helper()
		encoded, _ := json.Marshal(result.Batch{SchemaVersion: result.SchemaVersion, Results: []result.Result{r}})
		if err := validate(t, schema, encoded); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, encoded)
		}
	}

	t.Run("ping", func(t *testing.T) {
		outputs, _ := filepath.Glob(filepath.Join("..", "probe", "ping", "testdata", "*.txt"))
		for _, file := range outputs {
			data, _ := os.ReadFile(file)
			parsed := ping.Parse(data, ping.Run{Start: start, Interval: time.Second})
			r := newResult("ping")
			if parsed.Summary {
				r.Ping = &result.Ping{Count: max(parsed.Transmitted, 1), IntervalS: 1, SizeBytes: 56,
					Transmitted: parsed.Transmitted, Received: parsed.Received, Duplicates: parsed.Duplicates,
					Errors: parsed.Errors, Samples: parsed.Samples}
			} else {
				r.Fail("ping: " + parsed.Fatal)
			}
			check(t, filepath.Base(file), r)
		}
	})

	t.Run("throughput", func(t *testing.T) {
		outputs, _ := filepath.Glob(filepath.Join("..", "probe", "throughput", "testdata", "*.json"))
		if len(outputs) < 8 {
			t.Fatalf("only %d iperf3 outputs", len(outputs))
		}
		spec, err := throughput.DecodeSpec(json.RawMessage(`{"path_rtt_ms": 148}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range outputs {
			data, _ := os.ReadFile(file)
			outcome, err := throughput.Parse(data)
			r := newResult("throughput")
			if err != nil {
				r.Fail(err.Error())
			} else {
				outcome.Options = spec.Options()
				r.Throughput = &outcome
			}
			check(t, filepath.Base(file), r)
		}
		busy := newResult("throughput")
		busy.Fail(throughput.ErrBusy.Error())
		check(t, "busy guard", busy)
	})

	t.Run("trace", func(t *testing.T) {
		outputs, _ := filepath.Glob(filepath.Join("..", "probe", "trace", "testdata", "*.txt"))
		if len(outputs) < 8 {
			t.Fatalf("only %d traceroute outputs", len(outputs))
		}
		for _, file := range outputs {
			data, _ := os.ReadFile(file)
			parsed, err := trace.Parse(data)
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(file), err)
			}
			r := newResult("trace")
			r.Trace = &result.Trace{Method: "udp", DstPort: 33434, MaxHops: max(parsed.MaxHops, 1)}
			for flow := range 3 {
				r.Trace.Flows = append(r.Trace.Flows, result.TraceFlow{Flow: flow, SrcPort: 33500 + flow,
					Reached: parsed.Reached, Fingerprint: trace.Fingerprint(parsed.Hops), Hops: parsed.Hops})
			}
			check(t, filepath.Base(file), r)
		}
	})

	t.Run("flowsweep", func(t *testing.T) {
		responder := echo.New(0, "127.0.0.1", slog.New(slog.NewTextHandler(io.Discard, nil)))
		ready := make(chan net.Addr, 1)
		responder.Ready = func(a net.Addr) { ready <- a }
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		go responder.Run(ctx)
		var port int
		select {
		case a := <-ready:
			port = a.(*net.UDPAddr).Port
		case <-time.After(5 * time.Second):
			t.Fatal("echo responder did not start")
		}
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closedPort := closed.Addr().(*net.TCPAddr).Port
		closed.Close()
		for name, spec := range map[string]string{
			"udp":             `{"flows": 4, "samples_per_flow": 2, "interval_ms": 2, "timeout_ms": 300, "port": ` + strconv.Itoa(port) + `}`,
			"tcp":             `{"protocol": "tcp", "flows": 4, "samples_per_flow": 2, "interval_ms": 2, "timeout_ms": 300, "port": ` + strconv.Itoa(port) + `}`,
			"tcp refused":     `{"protocol": "tcp", "flows": 2, "samples_per_flow": 2, "interval_ms": 2, "timeout_ms": 300, "port": ` + strconv.Itoa(closedPort) + `}`,
			"invalid spec":    `{"flows": 1}`,
			"udp unreachable": `{"flows": 2, "samples_per_flow": 2, "interval_ms": 2, "timeout_ms": 300, "port": ` + strconv.Itoa(closedPort) + `}`,
		} {
			test := plan.Test{ID: "flowsweep:x", Type: flowsweep.TestType, IntervalS: 60, Spec: json.RawMessage(spec),
				Peer: plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Address: "127.0.0.1"}}
			check(t, name, flowsweep.New().Run(ctx, test, "v"))
		}
	})
}

// The latency section as the prober makes it from real sessions against the agent's own
// reflector on loopback: answered, refused by admission (all lost), and failed for want of
// a reflector; an example's section decodes into the Go types unchanged.
func TestLatencyResultsFromRealSessionsFitTheSchema(t *testing.T) {
	schema := compileSchema(t)
	service := reflector.New(0, "127.0.0.1", 1000, hostclock.For(true), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ready := make(chan net.Addr, 1)
	service.Ready = func(a net.Addr) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { service.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	var port int
	select {
	case a := <-ready:
		port = a.(*net.UDPAddr).Port
	case <-time.After(10 * time.Second):
		t.Fatal("the reflector did not start")
	}
	closed, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.LocalAddr().(*net.UDPAddr).Port
	closed.Close()

	prober := latency.New(hostclock.For(false)) // this host's real clock, whatever its state
	for _, c := range []struct {
		name    string
		planned string
		port    int
	}{
		{"answered", "127.0.0.1", port},
		{"not a planned peer", "198.51.100.7", port},
		{"no reflector", "127.0.0.1", closedPort},
	} {
		service.Admit([]plan.TwampPeer{{Address: c.planned, Port: port}})
		spec := latency.Spec{PacketIntervalS: 0.05, PacketTimeoutS: 0.3, SizeBytes: 41, DSCP: 46, Port: c.port, ReportIntervalS: 1}
		started := time.Now()
		section, err := prober.Measure(ctx, spec, "127.0.0.1", started.Add(time.Second))
		r := result.New(latency.TestType, "latency:x", "v", "127.0.0.1", "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", started)
		r.EndedAt = time.Now().UTC()
		if err != nil {
			r.Fail(err.Error())
		} else {
			r.Latency = section
		}
		if (c.name == "no reflector") != (r.Status == result.StatusFailed) {
			t.Fatalf("%s: %s %q", c.name, r.Status, r.Error)
		}
		encoded, _ := json.Marshal(result.Batch{SchemaVersion: result.SchemaVersion, Results: []result.Result{r}})
		if err := validate(t, schema, encoded); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, encoded)
		}
	}

	data, err := os.ReadFile(filepath.Join(contract.Dir(t), "examples", "result-batch", "valid", "latency-one-way-loss.json"))
	if err != nil {
		t.Fatal(err)
	}
	var batch result.Batch
	if err := json.Unmarshal(data, &batch); err != nil {
		t.Fatal(err)
	}
	l := batch.Results[0].Latency
	if l == nil || l.Sent != l.Answered+l.Forward.Lost+l.Backward.Lost || *l.Forward.Hops != 3 || *l.Backward.Delay.P99Ms != 5.288 ||
		batch.Results[1].Latency.ReflectorClock != nil || batch.Results[1].Latency.Forward.ReorderedFraction != nil {
		t.Fatalf("the latency example decodes as %+v", l)
	}
}

// A ramp adds ramp_bps to the options and a ramp to the section; an ordinary run's result
// carries neither, so it encodes as it did before ramps.
func TestOnlyARampCarriesRampFields(t *testing.T) {
	ordinary, _ := json.Marshal(result.Throughput{})
	if strings.Contains(string(ordinary), "ramp") {
		t.Fatalf("an ordinary run encodes %s", ordinary)
	}
	data, err := os.ReadFile(filepath.Join(contract.Dir(t), "examples", "result-batch", "valid", "throughput-udp-ramp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var batch result.Batch
	if err := json.Unmarshal(data, &batch); err != nil {
		t.Fatal(err)
	}
	o := batch.Results[0].Throughput
	if len(o.Ramp) != 4 || len(o.Options.RampBps) != 4 || o.Ramp[2].OfferedBps != 135_000_000 || o.Ramp[2].LostPercent < 33 {
		t.Fatalf("the ramp example decodes as %+v", o.Ramp)
	}
}
