// Package trace runs Debian traceroute once per flow toward a peer, each flow from its own
// fixed UDP source port, so that on an ECMP path each flow keeps to one member and the
// flows together list the members. Its parser reads traceroute's text output.
package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/childproc"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// TestType is the plan's name for this probe.
const TestType = "trace"

// Spec is a trace test's options, as the plan sends them.
type Spec struct {
	Flows int `json:"flows"`
	// SrcPortBase is flow 0's source port; flow i uses SrcPortBase+i, so a flow keeps its
	// 5-tuple, and its ECMP member, from one run to the next. The default sits below Linux's
	// ephemeral range (32768-60999), where a flow sweep's or iperf3's sockets could hold it.
	SrcPortBase int     `json:"src_port_base"`
	DstPort     int     `json:"dst_port"`
	Queries     int     `json:"queries"` // probes per hop (-q)
	WaitS       float64 `json:"wait_s"`  // per probe (-w)
	MaxHops     int     `json:"max_hops"`
}

// DefaultSpec traces 8 flows, one query per hop, up to 30 hops.
func DefaultSpec() Spec {
	return Spec{Flows: 8, SrcPortBase: 31000, DstPort: 33434, Queries: 1, WaitS: 1, MaxHops: 30}
}

// DecodeSpec reads a plan's spec over the defaults, refusing unknown fields, and validates it.
func DecodeSpec(raw json.RawMessage) (Spec, error) {
	spec := DefaultSpec()
	if err := probe.DecodeSpec(raw, &spec); err != nil {
		return spec, err
	}
	return spec, spec.Validate()
}

// Validate names the first option out of range.
func (s Spec) Validate() error {
	switch {
	case s.Flows < 1 || s.Flows > 64:
		return fmt.Errorf("flows %d out of range 1..64", s.Flows)
	case s.SrcPortBase < 1024 || s.SrcPortBase > 65472 || s.SrcPortBase+s.Flows-1 > 65535:
		return fmt.Errorf("src_port_base %d out of range 1024..%d for %d flows", s.SrcPortBase, 65536-s.Flows, s.Flows)
	case s.DstPort < 1 || s.DstPort > 65535:
		return fmt.Errorf("dst_port %d out of range 1..65535", s.DstPort)
	case s.Queries < 1 || s.Queries > 5:
		return fmt.Errorf("queries %d out of range 1..5", s.Queries)
	case math.IsNaN(s.WaitS) || s.WaitS < 0.1 || s.WaitS > 10:
		return fmt.Errorf("wait_s %v out of range 0.1..10", s.WaitS)
	case s.MaxHops < 1 || s.MaxHops > 64:
		return fmt.Errorf("max_hops %d out of range 1..64", s.MaxHops)
	}
	return nil
}

// worstFlow is how long one traceroute takes when no hop answers: --sport sends one probe
// at a time. A run is not refused for it (the server's bounds are the contract); each
// traceroute is only stopped when it overruns its own worst case.
func (s Spec) worstFlow() time.Duration {
	return time.Duration(float64(s.MaxHops*s.Queries) * s.WaitS * float64(time.Second))
}

// Args is traceroute's command line for one flow. --mtu sends each probe as large as the
// path allows, unfragmented, and notes "F=N" where the path MTU drops: the path page shows
// it (a 9000-byte host behind a 1500-byte hop). Its probes already go one at a time
// (--sport), as --mtu needs.
func (s Spec) Args(flow int, address string) []string {
	host, family := probe.Target(address)
	args := []string{"-n", "-U", "-p", strconv.Itoa(s.DstPort), "--sport=" + strconv.Itoa(s.SrcPortBase+flow),
		"-q", strconv.Itoa(s.Queries), "-w", strconv.FormatFloat(s.WaitS, 'f', -1, 64),
		"-m", strconv.Itoa(s.MaxHops), "--mtu"}
	args = append(args, probe.FamilyFlag(family)...)
	return append(args, host)
}

// Parallel is how many flows are traced at once: a run of 8 flows takes about two flows'
// time, while the peer's ICMP rate limit still sees few probes at a time.
const Parallel = 4

// Linux answers one peer with a burst of 6 ICMP errors, then one a second
// (net.ipv4.icmp_ratelimit), and routers limit likewise. Every flow needs the destination's
// port unreachable, so flows beyond the burst start a second apart; faster, the later flows
// would show the rate limit as silent hops and a path that is not there.
const (
	icmpBurst    = 5
	icmpInterval = 1100 * time.Millisecond
)

// flowStartDelay is how long after the run's start flow i may begin.
func flowStartDelay(i int) time.Duration {
	return time.Duration(max(0, i-icmpBurst+1)) * icmpInterval
}

// Prober runs traceroute. Binary and Now are fields so tests can replace them.
type Prober struct {
	Binary string
	Now    func() time.Time

	mu    sync.Mutex
	ports map[int]*sync.Mutex
}

// New returns a prober running binary.
func New(binary string) *Prober { return &Prober{Binary: binary, Now: time.Now} }

// portLock serialises this agent's traceroutes per source port: two trace tests to
// different peers share the ports of their flows, and the second bind() would fail.
func (p *Prober) portLock(port int) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ports == nil {
		p.ports = map[int]*sync.Mutex{}
	}
	if p.ports[port] == nil {
		p.ports[port] = &sync.Mutex{}
	}
	return p.ports[port]
}

// flowRun is one flow's outcome: its path or why there is none.
type flowRun struct {
	flow result.TraceFlow
	err  error
}

// errCannotRun marks failures of traceroute itself (missing, not executable), not of a flow.
type errCannotRun struct{ error }

// Run traces every flow to the test's peer and returns the result. A run is failed when
// any flow has no path to show, with each such flow's reason: a partial set of flows
// would read as fewer ECMP members than there are.
func (p *Prober) Run(ctx context.Context, test plan.Test, planVersion string) result.Result {
	res := result.New(TestType, test.ID, planVersion, test.Peer.Address, test.Peer.ID, p.Now())
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		res.Fail("invalid trace spec: " + err.Error())
		return res
	}
	if address := test.Peer.Address; address == "" || strings.HasPrefix(address, "-") || strings.ContainsAny(address, " \t\n") {
		res.Fail(fmt.Sprintf("trace: peer address %q is not a host", address))
		return res
	}
	runs := make([]flowRun, spec.Flows)
	slots := make(chan struct{}, Parallel)
	var wg sync.WaitGroup
	for i := range spec.Flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(flowStartDelay(i)):
			case <-ctx.Done():
				runs[i].err = ctx.Err()
				return
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				runs[i].err = ctx.Err()
				return
			}
			defer func() { <-slots }()
			runs[i] = p.traceFlow(ctx, spec, i, test.Peer.Address)
		}()
	}
	wg.Wait()
	res.EndedAt = p.Now().UTC()
	if ctx.Err() != nil {
		res.Fail("trace cancelled (agent stopping)")
		return res
	}
	var problems []string
	flows := make([]result.TraceFlow, 0, spec.Flows)
	for i, r := range runs {
		var cannot errCannotRun
		if errors.As(r.err, &cannot) {
			res.Fail(cannot.Error())
			return res
		}
		if r.err != nil {
			problems = append(problems, fmt.Sprintf("flow %d (source port %d): %v", i, spec.SrcPortBase+i, r.err))
			continue
		}
		flows = append(flows, r.flow)
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
		}
		res.Fail("trace: " + strings.Join(problems, "; "))
		return res
	}
	res.Trace = &result.Trace{Method: "udp", DstPort: spec.DstPort, MaxHops: spec.MaxHops, Flows: flows}
	return res
}

func (p *Prober) traceFlow(ctx context.Context, spec Spec, flow int, address string) flowRun {
	port := spec.SrcPortBase + flow
	lock := p.portLock(port)
	lock.Lock()
	defer lock.Unlock()

	runCtx, cancel := context.WithTimeout(ctx, spec.worstFlow()+10*time.Second)
	defer cancel()
	cmd := childproc.Command(runCtx, p.Binary, spec.Args(flow, address)...)
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	var execErr *exec.Error
	switch {
	case errors.As(runErr, &execErr), errors.Is(runErr, fs.ErrNotExist), errors.Is(runErr, fs.ErrPermission):
		return flowRun{err: errCannotRun{fmt.Errorf("traceroute cannot run: %w", runErr)}}
	case ctx.Err() != nil:
		return flowRun{err: ctx.Err()}
	case runCtx.Err() != nil:
		return flowRun{err: errors.New("traceroute did not finish in time")}
	}
	parsed, err := Parse(stdout.Bytes())
	if err != nil || (runErr != nil && len(parsed.Hops) == 0) {
		reason := strings.Join(strings.Fields(stderr.String()), " ")
		switch {
		case reason != "":
		case runErr != nil:
			reason = runErr.Error()
		default:
			reason = err.Error()
		}
		if len(reason) > 200 {
			reason = reason[:200]
		}
		return flowRun{err: errors.New(reason)}
	}
	return flowRun{flow: result.TraceFlow{
		Flow: flow, SrcPort: port, Reached: parsed.Reached, Fingerprint: Fingerprint(parsed.Hops), Hops: parsed.Hops,
	}}
}
