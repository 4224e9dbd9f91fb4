package trace

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

func TestDecodeSpecDefaultsAndValidation(t *testing.T) {
	spec, err := DecodeSpec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if spec != (Spec{Flows: 8, SrcPortBase: 31000, DstPort: 33434, Queries: 1, WaitS: 1, MaxHops: 30}) {
		t.Fatalf("defaults %+v", spec)
	}
	// What the server sends: its normalised spec, every option present.
	if spec, err = DecodeSpec(json.RawMessage(`{"flows": 64, "dst_port": 33434, "queries": 5, "wait_s": 10, "max_hops": 64}`)); err != nil {
		t.Fatalf("server spec: %+v %v", spec, err)
	}
	bad := map[string]struct{ spec, want string }{
		"unknown field":   {`{"flow": 2}`, `unknown field "flow"`},
		"trailing":        {`{} []`, "trailing data"},
		"no flows":        {`{"flows": 0}`, "flows 0 out of range 1..64"},
		"too many flows":  {`{"flows": 65}`, "flows 65 out of range"},
		"privileged port": {`{"src_port_base": 80}`, "src_port_base 80 out of range"},
		"ports overflow":  {`{"src_port_base": 65530}`, "src_port_base 65530 out of range 1024..65528 for 8 flows"},
		"dst port":        {`{"dst_port": 0}`, "dst_port 0 out of range"},
		"queries":         {`{"queries": 6}`, "queries 6 out of range 1..5"},
		"wait too short":  {`{"wait_s": 0.01}`, "wait_s 0.01 out of range 0.1..10"},
		"max hops":        {`{"max_hops": 65}`, "max_hops 65 out of range 1..64"},
	}
	for name, tc := range bad {
		if _, err := DecodeSpec(json.RawMessage(tc.spec)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestArgsPinOneFlow(t *testing.T) {
	got := strings.Join(Spec{Flows: 8, SrcPortBase: 33500, DstPort: 33434, Queries: 1, WaitS: 0.5, MaxHops: 30}.Args(3, "198.18.4.2"), " ")
	want := "-n -U -p 33434 --sport=33503 -q 1 -w 0.5 -m 30 --mtu -4 198.18.4.2"
	if got != want {
		t.Fatalf("args %q, want %q", got, want)
	}
	// traceroute refuses "[::1]"; a literal also pins the family, so a host name with both
	// families is never traced over the other one.
	for address, want := range map[string]string{"[2001:db8::1]": "-6 2001:db8::1", "::1": "-6 ::1", "peer.example": "-m 30 --mtu peer.example"} {
		if got := strings.Join(DefaultSpec().Args(0, address), " "); !strings.HasSuffix(got, want) {
			t.Errorf("%s: args %q, want ...%q", address, got, want)
		}
	}
}

func needTraceroute(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("traceroute"); err != nil {
		t.Skip("traceroute is not installed")
	}
}

// freeUDPPorts finds a base port with n free UDP ports above it, so parallel test runs on
// one machine do not collide on the default base port.
func freeUDPPorts(t *testing.T, n int) int {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		free := base+n <= 65535
		for p := base; free && p < base+n; p++ {
			probe, err := net.ListenPacket("udp", ":"+strconv.Itoa(p))
			if err != nil {
				free = false
				break
			}
			probe.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no run of free UDP ports")
	return 0
}

func traceTest(spec string) plan.Test {
	return plan.Test{
		ID: "trace:peer", Type: TestType, IntervalS: 600,
		Peer: plan.Peer{ID: "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", Name: "peer", Address: "127.0.0.1"},
		Spec: json.RawMessage(spec),
	}
}

func run(t *testing.T, p *Prober, test plan.Test) result.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Run(ctx, test, "v9")
}

func TestRunTracesEveryFlowOnLoopback(t *testing.T) {
	needTraceroute(t)
	base := freeUDPPorts(t, 6)
	res := run(t, New("traceroute"), traceTest(`{"flows": 6, "src_port_base": `+strconv.Itoa(base)+`, "max_hops": 5}`))
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	tr := res.Trace
	if tr.Method != "udp" || tr.DstPort != 33434 || tr.MaxHops != 5 || len(tr.Flows) != 6 {
		t.Fatalf("trace %+v", tr)
	}
	for i, f := range tr.Flows {
		if f.Flow != i || f.SrcPort != base+i || !f.Reached || len(f.Hops) != 1 || f.Fingerprint != tr.Flows[0].Fingerprint {
			t.Fatalf("flow %d: %+v", i, f)
		}
		probe := f.Hops[0].Probes[0]
		if probe.Address == nil || *probe.Address != "127.0.0.1" || probe.RTTMs == nil {
			t.Fatalf("flow %d hop 1: %+v", i, probe)
		}
	}
}

func TestRunSilentDestinationIsNotReached(t *testing.T) {
	needTraceroute(t)
	// A socket on the destination port swallows the probes: no port unreachable comes back.
	sink, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	dport := sink.LocalAddr().(*net.UDPAddr).Port
	base := freeUDPPorts(t, 2)
	began := time.Now()
	res := run(t, New("traceroute"), traceTest(`{"flows": 2, "src_port_base": `+strconv.Itoa(base)+
		`, "dst_port": `+strconv.Itoa(dport)+`, "max_hops": 2, "wait_s": 0.2}`))
	if res.Status != result.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	for _, f := range res.Trace.Flows {
		if f.Reached || len(f.Hops) != 2 || f.Hops[1].Probes[0].Address != nil {
			t.Fatalf("flow %+v", f)
		}
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("two flows of 2 x 0.2 s took %v", took)
	}
}

func TestRunFailsWithEachFlowsReason(t *testing.T) {
	needTraceroute(t)
	base := freeUDPPorts(t, 3)
	taken, err := net.ListenPacket("udp", ":"+strconv.Itoa(base+1))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	res := run(t, New("traceroute"), traceTest(`{"flows": 3, "src_port_base": `+strconv.Itoa(base)+`, "max_hops": 3}`))
	want := "trace: flow 1 (source port " + strconv.Itoa(base+1) + "): bind: Address already in use"
	if res.Status != result.StatusFailed || res.Error != want || res.Trace != nil {
		t.Fatalf("%s %q, want %q", res.Status, res.Error, want)
	}
}

func TestRunThatCannotStartSaysWhy(t *testing.T) {
	notExecutable := filepath.Join(t.TempDir(), "traceroute")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, binary := range []string{"/nonexistent/traceroute", notExecutable} {
		res := run(t, New(binary), traceTest(`{"flows": 2}`))
		if res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, "traceroute cannot run: ") {
			t.Errorf("%s: %s %q", binary, res.Status, res.Error)
		}
	}
	for spec, want := range map[string]string{`{"flows": 0}`: "invalid trace spec: flows 0", `{"hops": 3}`: "invalid trace spec: json: unknown field"} {
		if res := run(t, New("traceroute"), traceTest(spec)); res.Status != result.StatusFailed || !strings.HasPrefix(res.Error, want) {
			t.Errorf("%s: %s %q", spec, res.Status, res.Error)
		}
	}
	option := traceTest(`{"flows": 1}`)
	option.Peer.Address = "-f5"
	if res := run(t, New("traceroute"), option); res.Status != result.StatusFailed || !strings.Contains(res.Error, "is not a host") {
		t.Errorf("an option as the address: %s %q", res.Status, res.Error)
	}
}

func TestRunIsCancelledWithTheAgent(t *testing.T) {
	needTraceroute(t)
	sink, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	dport := sink.LocalAddr().(*net.UDPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	res := New("traceroute").Run(ctx, traceTest(`{"flows": 2, "src_port_base": `+strconv.Itoa(freeUDPPorts(t, 2))+
		`, "dst_port": `+strconv.Itoa(dport)+`, "max_hops": 10, "wait_s": 1}`), "")
	if res.Status != result.StatusFailed || res.Error != "trace cancelled (agent stopping)" {
		t.Fatalf("%s %q", res.Status, res.Error)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("cancel took %v", took)
	}
}

func TestFlowsBeyondTheICMPBurstStartASecondApart(t *testing.T) {
	for i, want := range []time.Duration{0, 0, 0, 0, 0, 1100 * time.Millisecond, 2200 * time.Millisecond} {
		if got := flowStartDelay(i); got != want {
			t.Errorf("flowStartDelay(%d) = %v, want %v", i, got, want)
		}
	}
}
