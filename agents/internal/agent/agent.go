// Package agent wires the running agent together: plan polling, the scheduler and probes,
// the spool and uploader, host facts, the iperf3 server, echo responder and TWAMP-light
// reflector peers test against, and the iperf3 windows and TWAMP-Control server perfSONAR
// nodes test against.
package agent

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fathom-net/fathom/agents/internal/api"
	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/echo"
	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/iperfserver"
	"github.com/fathom-net/fathom/agents/internal/iperfwindow"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe"
	"github.com/fathom-net/fathom/agents/internal/probe/flowsweep"
	"github.com/fathom-net/fathom/agents/internal/probe/hostfacts"
	"github.com/fathom-net/fathom/agents/internal/probe/latency"
	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/probe/throughput"
	"github.com/fathom-net/fathom/agents/internal/probe/trace"
	"github.com/fathom-net/fathom/agents/internal/reflector"
	"github.com/fathom-net/fathom/agents/internal/result"
	"github.com/fathom-net/fathom/agents/internal/schedule"
	"github.com/fathom-net/fathom/agents/internal/spool"
	"github.com/fathom-net/fathom/agents/internal/twampcontrol"
	"github.com/fathom-net/fathom/agents/internal/upload"
)

// Probes is the registry: one line per probe type.
func Probes(cfg config.Config) probe.Registry {
	pinger := ping.New()
	pinger.Binary = cfg.Ping.Binary
	return probe.Registry{
		ping.TestType:       pinger,
		throughput.TestType: throughput.New(cfg.Iperf3.Binary),
		flowsweep.TestType:  flowsweep.New(),
		trace.TestType:      trace.New(cfg.Trace.Binary),
		latency.TestType:    latency.New(hostclock.For(cfg.Twamp.ClockShared)),
	}
}

// Agent is a running fathom-agent.
type Agent struct {
	cfg      config.Config
	client   *api.Client
	clock    clock.Clock
	log      *slog.Logger
	probes   probe.Registry
	spool    *spool.Spool
	uploader *upload.Uploader
	facts    *hostfacts.Collector
	cache    plan.Cache
	current  atomic.Pointer[plan.Plan]
	version  string
	// iperfAuth is nil when the iperf3 server is off or its iperf3 lacks authentication.
	iperfAuth *iperfserver.Auth
	// windows is nil when perfSONAR nodes may not test against this agent.
	windows *iperfwindow.Opener
	// reflector is nil when the TWAMP-light reflector is off.
	reflector *reflector.Service
	// twampControl is nil when the reflector or TWAMP-Control is off.
	twampControl *twampcontrol.Server
}

// New prepares an agent; nothing runs until Run. clk times its waits (clock.Real but in a
// test build).
func New(cfg config.Config, client *api.Client, version string, clk clock.Clock, log *slog.Logger) (*Agent, error) {
	sp, err := spool.Open(filepath.Join(cfg.StateDir, "spool"), cfg.Spool.MaxBytes)
	if err != nil {
		return nil, err
	}
	if client != nil { // nil in tests that never reach the server
		client.Backlog = sp.Backlog
	}
	a := &Agent{
		cfg: cfg, client: client, clock: clk, log: log, probes: Probes(cfg), spool: sp, version: version,
		cache: plan.Cache{Path: filepath.Join(cfg.StateDir, "plan.json")},
	}
	iperfPort := 0
	if cfg.Iperf3.Enabled {
		iperfPort = cfg.Iperf3.Port
	}
	a.facts = hostfacts.New(version, cfg.Iperf3.Binary, iperfPort, cfg.Twamp.ClockShared)
	if cfg.Iperf3.Enabled {
		if iperfserver.Supported(context.Background(), cfg.Iperf3.Binary) {
			if a.iperfAuth, err = iperfserver.PrepareAuth(cfg.StateDir); err != nil {
				return nil, fmt.Errorf("iperf3 server authentication: %w", err)
			}
			a.facts.IperfPublicKey = a.iperfAuth.PublicKey
		} else {
			log.Warn("this iperf3 was built without authentication: its server admits anyone who reaches the port",
				"binary", cfg.Iperf3.Binary)
		}
	}
	if cfg.Iperf3.Enabled && cfg.Iperf3.PerfsonarWindows {
		// Never beside the agent's own listeners: the echo responder holds its port on TCP too.
		reserved := []int{cfg.Iperf3.Port}
		if cfg.Echo.Enabled {
			reserved = append(reserved, cfg.Echo.Port)
		}
		if cfg.Twamp.Enabled { // a window's iperf3 takes its port on UDP too
			reserved = append(reserved, cfg.Twamp.Port)
		}
		a.windows = iperfwindow.New(cfg.Iperf3.Binary, cfg.Iperf3.Bind, reserved, log.With("component", "iperf3-window"))
	}
	if cfg.Twamp.Enabled {
		a.reflector = reflector.New(cfg.Twamp.Port, cfg.Twamp.Bind, cfg.Twamp.Rate, hostclock.For(cfg.Twamp.ClockShared),
			log.With("component", "twamp"))
		if cfg.Twamp.Control {
			// The reflector's admission is the control server's: one set of planned peers.
			a.twampControl = twampcontrol.New(cfg.Twamp.Port, cfg.Twamp.Bind, cfg.Twamp.Port, a.reflector.Admits,
				log.With("component", "twamp-control"))
		}
	}
	if cfg.Twamp.ClockShared {
		log.Warn("twamp.clock_shared: this host's clock is declared synchronized to 1 µs whatever NTP says; only a lab whose hosts share one kernel may",
			"component", "twamp")
	}
	a.uploader = upload.New(sp, client, cfg.Upload.BatchSize, log.With("component", "upload"), a.uploadInterval)
	a.uploader.Clock = clk
	return a, nil
}

func (a *Agent) uploadInterval() time.Duration {
	if p := a.current.Load(); p != nil && p.UploadIntervalS > 0 {
		return time.Duration(p.UploadIntervalS) * time.Second
	}
	return 10 * time.Second
}

// runTest runs one background test and spools its result.
func (a *Agent) runTest(ctx context.Context, test plan.Test, planVersion string) {
	a.store(ctx, a.measure(ctx, test, planVersion))
}

// runSlot runs one server-planned exclusive slot, or reports it missed with the reason.
func (a *Agent) runSlot(ctx context.Context, slot plan.Slot, planVersion, missed string) {
	var res result.Result
	if missed != "" {
		res = result.New(slot.Type, slot.TestID, planVersion, slot.Peer.Address, slot.Peer.ID, slot.StartAt)
		res.Miss(missed)
	} else {
		res = a.measure(ctx, slot.Test(), planVersion)
	}
	res.SlotID = &slot.ID
	a.store(ctx, res)
}

func (a *Agent) measure(ctx context.Context, test plan.Test, planVersion string) result.Result {
	if prober, ok := a.probes[test.Type]; ok {
		return prober.Run(ctx, test, planVersion)
	}
	res := result.New(test.Type, test.ID, planVersion, test.Peer.Address, test.Peer.ID, time.Now())
	res.Fail(fmt.Sprintf("this agent (version %s) has no %q probe", a.version, test.Type))
	return res
}

// store spools a result for upload; a full spool is logged, never fatal.
func (a *Agent) store(ctx context.Context, res result.Result) {
	testID := res.TestID
	if ctx.Err() != nil && res.Status == result.StatusFailed {
		return // cut short by shutdown: not a measurement
	}
	if err := a.spool.Put(res); err != nil {
		a.log.Error("result not spooled", "test", testID, "error", err)
		return
	}
	if res.Status != result.StatusOK {
		a.log.Warn("probe "+res.Status, "test", testID, "target", res.Target, "error", res.Error)
	}
	a.uploader.Kick()
}

// Run works until ctx ends. Probes stop at once; spooled results stay for the next start.
func (a *Agent) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if a.cfg.Iperf3.Enabled {
		server := &iperfserver.Server{
			Binary: a.cfg.Iperf3.Binary, Port: a.cfg.Iperf3.Port, Bind: a.cfg.Iperf3.Bind, Auth: a.iperfAuth,
			// The longest run the options allow, and a minute for set-up and the results exchange.
			MaxTest: (throughput.MaxDurationS + throughput.MaxOmitS + 60) * time.Second,
			Log:     a.log.With("component", "iperf3"), MinBackoff: time.Second, MaxBackoff: time.Minute,
		}
		wg.Add(1)
		go func() { defer wg.Done(); server.Run(ctx) }()
	}
	if a.windows != nil {
		wg.Add(1)
		go func() { defer wg.Done(); a.windows.Run(ctx) }()
	}
	if a.cfg.Echo.Enabled {
		responder := echo.New(a.cfg.Echo.Port, a.cfg.Echo.Bind, a.log.With("component", "echo"))
		wg.Add(1)
		go func() { defer wg.Done(); responder.Run(ctx) }()
	}
	if a.reflector != nil {
		wg.Add(1)
		go func() { defer wg.Done(); a.reflector.Run(ctx) }()
	}
	if a.twampControl != nil {
		wg.Add(1)
		go func() { defer wg.Done(); a.twampControl.Run(ctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.uploader.Run(ctx) }()

	// Tests repeat at intervals of the agent's clock; slots start at the server's absolute
	// times, on the wall clock.
	sched := &schedulers{
		tests: schedule.New(ctx, a.runTest),
		slots: schedule.NewSlots(ctx, a.runSlot, filepath.Join(a.cfg.StateDir, "slots.json")),
	}
	sched.tests.Clock = a.clock
	sched.tests.Lasts = a.probes.Lasts
	if cached, err := a.cache.Load(); err != nil {
		a.log.Warn("cached plan unreadable; waiting for the server", "error", err)
	} else if cached != nil {
		a.adopt(sched, cached, "cache")
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.reportFacts(ctx) }()

	etag := ""
	poll := time.Duration(a.cfg.PlanPollIntervalS) * time.Second
	for {
		etag = a.refreshPlan(ctx, sched, etag)
		select {
		case <-ctx.Done():
			sched.Wait()
			wg.Wait()
			pending, rejected := a.spool.Counts()
			a.log.Info("stopped", "spooled_results", pending, "rejected_results", rejected)
			return nil
		case <-a.clock.After(poll):
		}
	}
}

// schedulers run a plan: its background tests at their intervals, its slots at their starts.
type schedulers struct {
	tests *schedule.Scheduler
	slots *schedule.Slots
}

func (s *schedulers) Apply(p *plan.Plan) {
	s.tests.Apply(p)
	s.slots.Apply(p)
}

func (s *schedulers) Wait() {
	s.slots.Stop()
	s.tests.Wait()
	s.slots.Wait()
}

func (a *Agent) refreshPlan(ctx context.Context, sched *schedulers, etag string) string {
	body, newETag, notModified, err := a.client.Plan(ctx, etag)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			a.log.Warn("plan fetch failed; keeping the current plan", "error", err)
		}
	case !notModified:
		p, decodeErr := plan.Decode(body)
		if decodeErr != nil {
			a.log.Error("server sent an unusable plan", "error", decodeErr)
			break
		}
		if storeErr := a.cache.Store(p); storeErr != nil {
			a.log.Warn("plan not cached", "error", storeErr)
		}
		a.adopt(sched, p, "server")
		etag = newETag
	}
	if current := a.current.Load(); current != nil {
		if usable := current.Usable(time.Now()); usable != nil {
			a.log.Error("plan expired: probing stopped until the server is reachable", "error", usable)
			sched.Apply(nil)
			a.current.Store(nil)
			if a.windows != nil {
				a.windows.Apply(nil)
			}
			if a.iperfAuth != nil {
				_ = a.iperfAuth.WriteUsers(nil) // an expired plan's slots are over
			}
			if a.reflector != nil {
				a.reflector.Admit(nil) // and its latency tests
			}
			etag = ""
		}
	}
	return etag
}

func (a *Agent) adopt(sched *schedulers, p *plan.Plan, source string) {
	if err := p.Usable(time.Now()); err != nil {
		a.log.Warn("not running an expired plan", "source", source, "error", err)
		return
	}
	previous := a.current.Swap(p)
	if a.iperfAuth != nil {
		if err := a.iperfAuth.WriteUsers(p.Iperf3Users); err != nil {
			a.log.Error("iperf3 server's clients not updated: peers' slots will be refused", "error", err)
		}
	}
	if a.reflector != nil {
		a.reflector.Admit(p.TwampPeers)
	}
	sched.Apply(p)
	if a.windows != nil {
		a.windows.Apply(p.Iperf3Windows)
	}
	if previous == nil || previous.Version != p.Version {
		a.log.Info("plan in force", "source", source, "version", p.Version, "tests", len(p.Tests), "slots", len(p.Slots),
			"iperf3_windows", len(p.Iperf3Windows))
		if a.windows == nil && len(p.Iperf3Windows) > 0 {
			a.log.Warn("the plan has perfSONAR nodes test against this agent, but iperf3.enabled or iperf3.perfsonar_windows is off: their runs will fail",
				"iperf3_windows", len(p.Iperf3Windows))
		}
		a.checkTwampPeers(p.TwampPeers)
	}
}

// checkTwampPeers warns when the plan's latency tests against this agent cannot be answered:
// the reflector is off, or they send to another port than it listens on.
func (a *Agent) checkTwampPeers(peers []plan.TwampPeer) {
	if len(peers) == 0 {
		return
	}
	if a.reflector == nil {
		a.log.Warn("the plan has peers measure latency against this agent, but twamp.enabled is off: they will lose every packet",
			"twamp_peers", len(peers))
		return
	}
	for _, peer := range peers {
		if peer.Port != a.cfg.Twamp.Port {
			a.log.Warn("a planned peer's latency test sends to another port than the reflector listens on: it will lose every packet",
				"peer", peer.Address, "port", peer.Port, "twamp.port", a.cfg.Twamp.Port)
		}
	}
}

// reportFacts sends host facts at start, when they change, and at least hourly.
func (a *Agent) reportFacts(ctx context.Context) {
	lastDigest := ""
	var lastSent time.Time
	for {
		facts := a.facts.Collect(ctx)
		if digest := facts.Digest(); digest != lastDigest || time.Since(lastSent) > a.clock.Scale(time.Hour) {
			if _, err := a.client.PutHostFacts(ctx, facts); err != nil {
				if ctx.Err() == nil {
					a.log.Warn("host facts not reported", "error", err)
				}
			} else {
				lastDigest, lastSent = digest, time.Now()
			}
		}
		interval := 300 * time.Second
		if p := a.current.Load(); p != nil && p.HostFactsIntervalS > 0 {
			interval = time.Duration(p.HostFactsIntervalS) * time.Second
		}
		if lastDigest == "" { // not reported yet: retry sooner
			interval = min(interval, 15*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.clock.After(interval):
		}
	}
}
