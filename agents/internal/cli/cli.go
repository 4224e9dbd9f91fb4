// Package cli is fathom-agent's command line: enroll, run, doctor and version.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/agent"
	"github.com/fathom-net/fathom/agents/internal/api"
	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/credential"
	"github.com/fathom-net/fathom/agents/internal/doctor"
)

const usage = `usage:
  fathom-agent enroll --server URL --token TOKEN --name NAME --address ADDRESS [--address IPV6-ADDRESS]
                      [--state-dir DIR] [--force] [--allow-insecure-http]
  fathom-agent run [--config FILE] [--config.check] [--state-dir DIR] [--server URL] [--iperf3-port N]
                   [--iperf3-bind ADDR] [--iperf3-enabled BOOL] [--allow-insecure-http BOOL] [--log.level L] [--log.format text|json]
  fathom-agent doctor [--server URL] [--state-dir DIR] [--iperf3-port N] [--path-rtt-ms MS] [--goal-mbps N]
  fathom-agent version
`

// Main runs a command and returns the process exit code.
func Main(args []string, version string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "enroll":
		err = enroll(args[1:], version, getenv, stdout)
	case "run":
		err = run(args[1:], version, getenv, stdout, stderr)
	case "doctor":
		var failed bool
		failed, err = runDoctor(args[1:], getenv, stdout)
		if err == nil && failed {
			return 1
		}
	case "version", "--version":
		fmt.Fprintln(stdout, "fathom-agent", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "fathom-agent:", err)
		return 1
	}
	return 0
}

func enroll(args []string, version string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("enroll", flag.ContinueOnError)
	server := fs.String("server", getenv("FATHOM_SERVER"), "Fathom server URL")
	token := fs.String("token", getenv("FATHOM_ENROLL_TOKEN"), "single-use enrolment token")
	name := fs.String("name", getenv("FATHOM_AGENT_NAME"), "this agent's name")
	addresses := addressList{values: strings.Fields(strings.ReplaceAll(getenv("FATHOM_AGENT_ADDRESS"), ",", " "))}
	fs.Var(&addresses, "address", "an address peers reach this agent at; again for its other family (IPv4 and IPv6)")
	stateDir := fs.String("state-dir", firstNonEmpty(getenv("FATHOM_STATE_DIR"), config.Defaults().StateDir), "state directory")
	force := fs.Bool("force", false, "replace an existing credential")
	insecure := fs.Bool("allow-insecure-http", false, "allow plain http to a non-loopback server (labs only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	required := []struct{ flag, value string }{
		{"server", *server}, {"token", *token}, {"name", *name}, {"address", strings.Join(addresses.values, " ")},
	}
	for _, r := range required {
		if strings.TrimSpace(r.value) == "" {
			return fmt.Errorf("--%s is required", r.flag)
		}
	}
	base, err := api.CheckServerURL(*server, *insecure)
	if err != nil {
		return err
	}
	if !*force {
		if _, err := credential.Load(*stateDir); err == nil {
			return fmt.Errorf("%s: %w", credential.Path(*stateDir), credential.ErrExists)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := api.New(base, "", "", version)
	request := api.EnrollRequest{Token: *token, Name: *name, Address: addresses.values[0], AgentVersion: version}
	request.OtherAddresses = addresses.values[1:]
	answer, err := client.Enroll(ctx, request)
	if err != nil {
		return fmt.Errorf("enrolment failed: %w", err)
	}
	c := credential.Credential{Server: base.String(), AgentID: answer.AgentID, Name: answer.Name, Credential: answer.Credential}
	if err := credential.Save(*stateDir, c, *force); err != nil {
		return fmt.Errorf("enrolled as %s but the credential could not be saved: %w", answer.AgentID, err)
	}
	fmt.Fprintf(stdout, "enrolled %s as agent %s; credential in %s\n", answer.Name, answer.AgentID, credential.Path(*stateDir))
	return nil
}

// addressList is --address given once per family: the first flag on the command line
// replaces what FATHOM_AGENT_ADDRESS gave (space- or comma-separated), the rest add to it.
type addressList struct {
	values  []string
	flagged bool
}

func (l *addressList) String() string { return strings.Join(l.values, " ") }

func (l *addressList) Set(value string) error {
	if !l.flagged {
		l.values, l.flagged = nil, true
	}
	for _, address := range strings.Fields(strings.ReplaceAll(value, ",", " ")) {
		l.values = append(l.values, address)
	}
	return nil
}

func run(args []string, version string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, flags, err := config.Load(args, getenv)
	if flags != nil && flags.Check {
		if err != nil {
			return fmt.Errorf("config invalid: %w", err)
		}
		fmt.Fprintln(stdout, "config ok")
		return nil
	}
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log, stderr)
	cred, err := credential.Load(cfg.StateDir)
	if err != nil {
		return err
	}
	server := firstNonEmpty(cfg.Server, cred.Server)
	base, err := api.CheckServerURL(server, cfg.AllowInsecureHTTP || hostsMatch(server, cred.Server))
	if err != nil {
		return err
	}
	clk, err := clock.FromEnv(getenv)
	if err != nil {
		return err
	}
	if clk != clock.Real {
		log.Warn("test build: the agent's waits pass faster than real time; never deploy it", "rate", clk.Rate())
	}
	client := api.New(base, cred.AgentID, cred.Credential, version)
	a, err := agent.New(cfg, client, version, clk, log.With("agent", cred.Name))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log.Info("fathom-agent starting", "version", version, "agent", cred.Name, "agent_id", cred.AgentID, "server", base.String())
	return a.Run(ctx)
}

// hostsMatch: a server URL accepted at enrolment stays acceptable for running.
func hostsMatch(a, b string) bool { return a == b && a != "" }

func newLogger(cfg config.Log, w io.Writer) *slog.Logger {
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.Level]
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// runDoctor checks the host and prints one line per check; failed is true when one failed.
// The server is the flag, else FATHOM_SERVER, else the one stored at enrolment.
func runDoctor(args []string, getenv func(string) string, stdout io.Writer) (failed bool, err error) {
	defaults := config.Defaults()
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	server := fs.String("server", getenv("FATHOM_SERVER"), "Fathom server URL (default: the one stored at enrolment)")
	stateDir := fs.String("state-dir", firstNonEmpty(getenv("FATHOM_STATE_DIR"), defaults.StateDir), "state directory")
	port := fs.Int("iperf3-port", defaults.Iperf3.Port, "the port the agent's iperf3 server listens on")
	rttMs := fs.Float64("path-rtt-ms", 100, "the longest path's RTT the TCP buffers must cover")
	goalMbps := fs.Float64("goal-mbps", 1000, "the rate one flow should reach on that path")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	if value := getenv("FATHOM_IPERF3_PORT"); value != "" && !flagSet(fs, "iperf3-port") {
		if _, scanErr := fmt.Sscan(value, port); scanErr != nil {
			return false, fmt.Errorf("FATHOM_IPERF3_PORT=%q is not a port", value)
		}
	}
	if *server == "" {
		if cred, loadErr := credential.Load(*stateDir); loadErr == nil {
			*server = cred.Server
		}
	}
	results := doctor.Check(context.Background(), doctor.RealHost(), doctor.Options{
		Server:     *server,
		Iperf3Port: *port,
		PathRTT:    time.Duration(*rttMs * float64(time.Millisecond)),
		GoalBps:    *goalMbps * 1e6,
	})
	doctor.Write(stdout, results)
	return doctor.Failed(results), nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
