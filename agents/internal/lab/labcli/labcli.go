// Package labcli is fathom-lab's command line: up, down, exec, set, stats, hosts, run, check,
// and the agent's own probes, echo responder and iperf3 parser for use inside a lab host.
package labcli

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fathom-net/fathom/agents/internal/lab/emu"
	"github.com/fathom-net/fathom/agents/internal/lab/scenario"
	"github.com/fathom-net/fathom/agents/internal/lab/topo"
)

const usage = `usage:
  fathom-lab check SCENARIO...                 validate scenario files
  fathom-lab up [--state-dir D] [--management] SCENARIO
                                               bring a scenario up in the background
                                               (--management: hosts reach the root
                                               namespace at 198.19.0.1)
  fathom-lab down [--state-dir D] [--all]      tear it down (--all: every lab namespace)
  fathom-lab run [--state-dir D] SCENARIO -- CMD [ARG...]
                                               up, run CMD, always down (also on Ctrl-C)
  fathom-lab exec [--state-dir D] HOST -- CMD [ARG...]
  fathom-lab set [--state-dir D] LINK [a_to_b.|b_to_a.]KEY=VALUE...
                                               KEY: delay_ms jitter_ms loss rate_mbps queue_bytes
                                                    policer_rate_mbps policer_burst_bytes
  fathom-lab stats [--state-dir D] [--json]    packets, drops, late departures, ECMP members and their routers
                                               per link direction
  fathom-lab hosts [--state-dir D]             "NAME ADDRESS [MANAGEMENT-ADDRESS]" per host
The agent's own measurements, in the current namespace (run them with exec):
  fathom-lab probe hostfacts                   the host facts the agent reports (JSON)
  fathom-lab probe KIND --target ADDR [--spec JSON] [--peer-id UUID] [--test-id ID]
                   [--raw-out FILE]            run the agent's prober once and print its result
                                               (JSON); KIND: ping flowsweep trace throughput latency;
                                               --raw-out (throughput): also keep iperf3's -J output
  fathom-lab responder [--listen ADDR] [--port N]
                                               the agent's echo responder (port 5202) until
                                               SIGTERM; prints "ready" once it listens
  fathom-lab iperf3-result [--spec JSON] < IPERF3-JSON
                                               the throughput section the agent parses from it
These exit 2 on a usage error; probe exits 0 with any result, a failed one included.
The state directory defaults to $FATHOM_LAB_STATE, else /run/fathom-lab.
`

// Main runs a command and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	commands := map[string]func([]string, io.Writer, io.Writer) error{
		"check": check, "up": up, "down": down, "run": run, "exec": execIn,
		"set": set, "stats": stats, "hosts": hosts, "serve": serve,
		"probe": probeCmd, "responder": responder, "iperf3-result": iperf3Result,
	}
	command, ok := commands[args[0]]
	if !ok {
		if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "fathom-lab: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err := command(args[1:], stdout, stderr); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		}
		var usageErr usageError
		if errors.As(err, &usageErr) {
			fmt.Fprintln(stderr, "fathom-lab:", err)
			return 2
		}
		fmt.Fprintln(stderr, "fathom-lab:", err)
		return 1
	}
	return 0
}

func defaultStateDir() string {
	if dir := os.Getenv("FATHOM_LAB_STATE"); dir != "" {
		return dir
	}
	return "/run/fathom-lab"
}

// flags parses the common --state-dir and splits off a "-- CMD" tail.
func flags(name string, args []string, extra func(*flag.FlagSet)) (stateDir string, rest, command []string, err error) {
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&stateDir, "state-dir", defaultStateDir(), "lab state directory")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return "", nil, nil, err
	}
	abs, err := filepath.Abs(stateDir)
	return abs, fs.Args(), command, err
}

func logger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func check(args []string, stdout, _ io.Writer) error {
	if len(args) == 0 {
		return errors.New("check needs at least one scenario file")
	}
	var errs []error
	for _, path := range args {
		s, err := scenario.Load(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%d hosts, %d links)\n", path, len(s.Hosts), len(s.Links))
	}
	return errors.Join(errs...)
}

// start brings a scenario up in this process, with its state and control socket in dir.
func start(dir, path string, management bool, log *slog.Logger) (*topo.Lab, func(), error) {
	s, err := scenario.Load(path)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	if old, err := topo.LoadState(dir); err == nil {
		if syscall.Kill(old.PID, 0) == nil {
			return nil, nil, fmt.Errorf("a lab (%s, pid %d) is already up in %s: use another --state-dir or `fathom-lab down`", old.Scenario, old.PID, dir)
		}
		topo.SweepPrefix(old.Prefix, log) // its process died: clear what it left
	}
	lab, err := topo.Up(s, topo.NewPrefix(), management, log)
	if err != nil {
		return nil, nil, err
	}
	listener, err := topo.Listen(dir)
	if err == nil {
		err = lab.State.Save(dir)
	}
	if err != nil {
		lab.Down()
		return nil, nil, err
	}
	go lab.Serve(listener)
	stop := func() {
		listener.Close()
		lab.Down()
		_ = os.Remove(topo.StateFile(dir))
		_ = os.Remove(topo.ControlSocket(dir))
	}
	return lab, stop, nil
}

// serve is what `up` runs in the background: the lab lives until SIGTERM or SIGINT.
func serve(args []string, _, stderr io.Writer) error {
	management := false
	dir, rest, _, err := flags("serve", args, managementFlag(&management))
	if err != nil || len(rest) != 1 {
		return fmt.Errorf("serve SCENARIO: %v", err)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	log := logger(stderr)
	if err := raisePriority(); err != nil {
		log.Warn("the emulator runs at the default priority: host load can make it late", "error", err)
	}
	lab, stop, err := start(dir, rest[0], management, log)
	if err != nil {
		return err
	}
	log.Info("lab up", "scenario", lab.State.Scenario, "prefix", lab.State.Prefix)
	// FATHOM_LAB_CPUPROFILE=FILE profiles the emulator for as long as the lab is up
	// (make lab-bench uses it to say what limits throughput).
	if path := os.Getenv("FATHOM_LAB_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer f.Close()
				defer pprof.StopCPUProfile()
			}
		}
	}
	<-signals
	stop()
	log.Info("lab down", "prefix", lab.State.Prefix)
	return nil
}

func managementFlag(management *bool) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.BoolVar(management, "management", false, "join every host to the root namespace on 198.19.0.0/24")
	}
}

func up(args []string, stdout, stderr io.Writer) error {
	management := false
	dir, rest, _, err := flags("up", args, managementFlag(&management))
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New("up needs one scenario file")
	}
	if _, err := scenario.Load(rest[0]); err != nil {
		return err // refused before anything is created
	}
	if old, err := topo.LoadState(dir); err == nil && syscall.Kill(old.PID, 0) == nil {
		return fmt.Errorf("a lab (%s, pid %d) is already up in %s: use another --state-dir or `fathom-lab down`", old.Scenario, old.PID, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "lab.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "--state-dir", dir, fmt.Sprintf("--management=%t", management), rest[0])
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Coming up waits for the root-change lock (topo.RootLockEnv), which a browser test
	// holds for as long as a spec runs (up to 120 s).
	deadline := time.After(upTimeout)
	for {
		if st, err := topo.LoadState(dir); err == nil && st.PID == cmd.Process.Pid {
			fmt.Fprintf(stdout, "lab %s up (prefix %s, pid %d); log %s\n", st.Scenario, st.Prefix, st.PID, logPath)
			return nil
		}
		select {
		case <-exited:
			data, _ := os.ReadFile(logPath)
			return fmt.Errorf("the lab did not come up:\n%s", strings.TrimSpace(string(data)))
		case <-deadline:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return fmt.Errorf("the lab did not come up within %s", upTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

const upTimeout = 240 * time.Second

var labNamespace = regexp.MustCompile(`^fl[0-9a-f]{4}-`)

func down(args []string, stdout, stderr io.Writer) error {
	all := false
	dir, _, _, err := flags("down", args, func(fs *flag.FlagSet) { fs.BoolVar(&all, "all", false, "remove every lab namespace") })
	if err != nil {
		return err
	}
	log := logger(stderr)
	if st, err := topo.LoadState(dir); err == nil {
		if syscall.Kill(st.PID, syscall.SIGTERM) == nil {
			for i := 0; i < 200 && syscall.Kill(st.PID, 0) == nil; i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
		topo.SweepPrefix(st.Prefix, log) // whatever a crashed emulator left
		_ = os.Remove(topo.StateFile(dir))
		_ = os.Remove(topo.ControlSocket(dir))
		fmt.Fprintf(stdout, "lab %s (prefix %s) down\n", st.Scenario, st.Prefix)
	} else if !all {
		return err
	}
	if all {
		names, err := topo.Namespaces("fl")
		if err != nil {
			return err
		}
		prefixes := map[string]bool{}
		for _, ns := range names {
			if labNamespace.MatchString(ns) {
				prefixes[ns[:6]] = true
			}
		}
		if links, err := net.Interfaces(); err == nil {
			for _, l := range links {
				if prefix, ok := topo.BridgePrefix(l.Name); ok {
					prefixes[prefix] = true
				}
			}
		}
		for prefix := range prefixes {
			topo.SweepPrefix(prefix, log)
		}
	}
	return nil
}

func run(args []string, _, stderr io.Writer) error {
	management := false
	dir, rest, command, err := flags("run", args, managementFlag(&management))
	if err != nil {
		return err
	}
	if len(rest) != 1 || len(command) == 0 {
		return errors.New("usage: run SCENARIO -- CMD [ARG...]")
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(signals)
	lab, stop, err := start(dir, rest[0], management, logger(stderr))
	if err != nil {
		return err
	}
	defer stop()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "FATHOM_LAB_STATE="+dir, "FATHOM_LAB_PREFIX="+lab.State.Prefix)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case sig := <-signals:
		_ = cmd.Process.Signal(sig)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		return fmt.Errorf("stopped by %v; the lab is torn down", sig)
	}
}

func execIn(args []string, _, _ io.Writer) error {
	dir, rest, command, err := flags("exec", args, nil)
	if err != nil {
		return err
	}
	if len(rest) != 1 || len(command) == 0 {
		return errors.New("usage: exec HOST -- CMD [ARG...]")
	}
	st, err := topo.LoadState(dir)
	if err != nil {
		return err
	}
	host, err := st.Host(rest[0])
	if err != nil {
		return err
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		return err
	}
	// Replace this process, so signals and the exit code are the command's own.
	return syscall.Exec(ipPath, append([]string{"ip", "netns", "exec", host.Namespace}, command...), os.Environ())
}

func set(args []string, stdout, _ io.Writer) error {
	dir, rest, _, err := flags("set", args, nil)
	if err != nil {
		return err
	}
	if len(rest) < 2 {
		return errors.New("usage: set LINK KEY=VALUE...")
	}
	values := map[string]string{}
	for _, kv := range rest[1:] {
		key, value, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q is not KEY=VALUE", kv)
		}
		values[key] = value
	}
	if _, err := topo.Call(dir, topo.Request{Op: "set", Link: rest[0], Values: values}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", rest[0], strings.Join(rest[1:], " "))
	return nil
}

func stats(args []string, stdout, _ io.Writer) error {
	var asJSON bool
	dir, _, _, err := flags("stats", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print the counters as JSON, with the late buckets' bounds")
	})
	if err != nil {
		return err
	}
	reply, err := topo.Call(dir, topo.Request{Op: "stats"})
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"late_bounds_us": emu.LateBoundsUs, "stats": reply.Stats})
	}
	st, err := topo.LoadState(dir)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "link\tdirection\tpackets\tbytes\tforwarded\tpolicer drops\tloss drops\tqueue drops\tTTL expired\tleft >1 ms late\tper member\tmember routers\t")
	for _, s := range reply.Stats {
		c := s.Counters
		routers := "-"
		if names := st.Routers[s.Link][directionIndex(s.Direction)]; len(names) > 0 {
			routers = strings.Join(names, " ")
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t%s\t\n", s.Link, s.Direction, c.Packets, c.Bytes, c.Forwarded,
			c.DroppedPolicer, c.DroppedLoss, c.DroppedQueue, c.Expired, lateOver(c.Late, time.Millisecond), c.PerMember, routers)
	}
	return w.Flush()
}

// lateOver sums the late buckets whose departures were all later than limit.
func lateOver(buckets []uint64, limit time.Duration) uint64 {
	var total uint64
	for i, count := range buckets {
		if i > 0 && emu.LateBoundsUs[i-1] >= limit.Microseconds() {
			total += count
		}
	}
	return total
}

// directionIndex is 0 for "a_to_b", 1 for "b_to_a", as topo's pairs are ordered.
func directionIndex(direction string) int {
	if direction == "b_to_a" {
		return 1
	}
	return 0
}

func hosts(args []string, stdout, _ io.Writer) error {
	dir, _, _, err := flags("hosts", args, nil)
	if err != nil {
		return err
	}
	st, err := topo.LoadState(dir)
	if err != nil {
		return err
	}
	// NAME ADDRESS [MANAGEMENT-ADDRESS [ADDRESS6]]: a host with an IPv6 address has "-" for a
	// management address it lacks, so the columns stay where scripts read them.
	for _, h := range st.Hosts {
		words := []any{h.Name, h.Address}
		if h.ManagementAddress != "" || h.Address6 != "" {
			words = append(words, cmp.Or(h.ManagementAddress, "-"))
		}
		if h.Address6 != "" {
			words = append(words, h.Address6)
		}
		fmt.Fprintln(stdout, words...)
	}
	return nil
}
