// Package config loads the agent's settings: defaults, then a YAML file (unknown keys are
// errors), then FATHOM_* environment variables, then flags; validated once, at load.
package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is every setting of `fathom-agent run`. fathom-agent.example.yaml documents each.
type Config struct {
	// Server overrides the URL stored at enrolment.
	Server            string `yaml:"server"`
	StateDir          string `yaml:"state_dir"`
	AllowInsecureHTTP bool   `yaml:"allow_insecure_http"`
	PlanPollIntervalS int    `yaml:"plan_poll_interval_s"`
	Iperf3            Iperf3 `yaml:"iperf3"`
	Echo              Echo   `yaml:"echo"`
	Twamp             Twamp  `yaml:"twamp"`
	Ping              Ping   `yaml:"ping"`
	Trace             Trace  `yaml:"trace"`
	Spool             Spool  `yaml:"spool"`
	Upload            Upload `yaml:"upload"`
	Log               Log    `yaml:"log"`
}

// Iperf3 configures the iperf3 server peers test against.
type Iperf3 struct {
	Enabled bool   `yaml:"enabled"`
	Binary  string `yaml:"binary"`
	Port    int    `yaml:"port"`
	Bind    string `yaml:"bind"`
	// PerfsonarWindows lets the agent open, for the windows its plan lists, a one-off iperf3
	// server without authentication on the plan's port (and Bind) that a perfSONAR node's
	// single-ended test connects to. Only with Enabled.
	PerfsonarWindows bool `yaml:"perfsonar_windows"`
}

// Echo configures the echo responder peers' flow sweeps probe (UDP echo, TCP handshakes).
type Echo struct {
	Enabled bool   `yaml:"enabled"`
	Port    int    `yaml:"port"`
	Bind    string `yaml:"bind"`
}

// Twamp configures the TWAMP-light reflector peers' latency tests send to, and the clock
// this host's TWAMP packets declare.
type Twamp struct {
	Enabled bool   `yaml:"enabled"`
	Port    int    `yaml:"port"`
	Bind    string `yaml:"bind"`
	// Rate is the answers a second to one sender: the fastest plannable test sends 100.
	Rate float64 `yaml:"rate"`
	// Control also answers TWAMP-Control on TCP at the same port, for full-TWAMP clients
	// (perfSONAR's twping): only with Enabled, since the reflector answers their packets.
	Control bool `yaml:"control"`
	// ClockShared declares this host's clock synchronized to 1 µs, whatever NTP says: only
	// for the lab, whose agents are network namespaces of one kernel and read one clock.
	// Never on real hosts: their one-way delays would pass for exact between clocks that
	// disagree.
	ClockShared bool `yaml:"clock_shared"`
}

// Ping configures the ping probe.
type Ping struct {
	Binary string `yaml:"binary"`
}

// Trace configures the trace probe.
type Trace struct {
	Binary string `yaml:"binary"`
}

// Spool bounds the on-disk queue of results.
type Spool struct {
	MaxBytes int64 `yaml:"max_bytes"`
}

// Upload configures batching.
type Upload struct {
	BatchSize int `yaml:"batch_size"`
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Defaults are what an empty configuration means.
func Defaults() Config {
	return Config{
		StateDir:          "/var/lib/fathom-agent",
		PlanPollIntervalS: 30,
		Iperf3:            Iperf3{Enabled: true, Binary: "iperf3", Port: 5201, PerfsonarWindows: true},
		Echo:              Echo{Enabled: true, Port: 5202},
		Twamp:             Twamp{Enabled: true, Port: 862, Rate: 100, Control: true},
		Ping:              Ping{Binary: "ping"},
		Trace:             Trace{Binary: "traceroute"},
		Spool:             Spool{MaxBytes: 256 << 20},
		Upload:            Upload{BatchSize: 200},
		Log:               Log{Level: "info", Format: "text"},
	}
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.StateDir == "":
		return errors.New("state_dir: must be set")
	case c.PlanPollIntervalS < 5 || c.PlanPollIntervalS > 3600:
		return fmt.Errorf("plan_poll_interval_s: %d out of range 5..3600", c.PlanPollIntervalS)
	case c.Iperf3.Enabled && (c.Iperf3.Port < 1 || c.Iperf3.Port > 65535):
		return fmt.Errorf("iperf3.port: %d out of range 1..65535", c.Iperf3.Port)
	case c.Iperf3.Enabled && c.Iperf3.Binary == "":
		return errors.New("iperf3.binary: must be set when iperf3.enabled")
	case c.Echo.Enabled && (c.Echo.Port < 1 || c.Echo.Port > 65535):
		return fmt.Errorf("echo.port: %d out of range 1..65535", c.Echo.Port)
	case c.Echo.Enabled && c.Iperf3.Enabled && c.Echo.Port == c.Iperf3.Port:
		return fmt.Errorf("echo.port: %d is iperf3.port too (the responder also listens on TCP)", c.Echo.Port)
	case c.Twamp.Enabled && (c.Twamp.Port < 1 || c.Twamp.Port > 65535):
		return fmt.Errorf("twamp.port: %d out of range 1..65535", c.Twamp.Port)
	case c.Twamp.Enabled && c.Echo.Enabled && c.Twamp.Port == c.Echo.Port:
		return fmt.Errorf("twamp.port: %d is echo.port too (both listen on UDP)", c.Twamp.Port)
	case c.Twamp.Enabled && c.Iperf3.Enabled && c.Twamp.Port == c.Iperf3.Port:
		return fmt.Errorf("twamp.port: %d is iperf3.port too (iperf3's UDP tests take its port on UDP)", c.Twamp.Port)
	case c.Twamp.Enabled && (math.IsNaN(c.Twamp.Rate) || c.Twamp.Rate < 1 || c.Twamp.Rate > 10000):
		return fmt.Errorf("twamp.rate: %g out of range 1..10000 answers a second per sender", c.Twamp.Rate)
	case c.Ping.Binary == "":
		return errors.New("ping.binary: must be set")
	case c.Trace.Binary == "":
		return errors.New("trace.binary: must be set")
	case c.Spool.MaxBytes < 1<<20:
		return fmt.Errorf("spool.max_bytes: %d is below 1 MiB", c.Spool.MaxBytes)
	case c.Upload.BatchSize < 1 || c.Upload.BatchSize > 500:
		return fmt.Errorf("upload.batch_size: %d out of range 1..500", c.Upload.BatchSize)
	case !oneOf(c.Log.Level, "debug", "info", "warn", "error"):
		return fmt.Errorf("log.level: %q is not debug, info, warn or error", c.Log.Level)
	case !oneOf(c.Log.Format, "text", "json"):
		return fmt.Errorf("log.format: %q is not text or json", c.Log.Format)
	}
	return nil
}

func oneOf(value string, allowed ...string) bool {
	for _, a := range allowed {
		if value == a {
			return true
		}
	}
	return false
}

// Parse decodes YAML over the defaults, refusing unknown keys (a typo must not be ignored).
func Parse(data []byte) (Config, error) {
	cfg := Defaults()
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	decoder.KnownFields(true)
	if err := decoder.Decode(&cfg); err != nil && err.Error() != "EOF" {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// Flags are the command-line options of `run`; unset ones leave the value alone.
type Flags struct {
	ConfigFile string
	Check      bool
	set        map[string]func(string) error
	fs         *flag.FlagSet
}

// Env lists the environment variables `run` reads, with the field each sets.
var Env = map[string]string{
	"FATHOM_SERVER":                   "server",
	"FATHOM_STATE_DIR":                "state_dir",
	"FATHOM_PLAN_POLL_INTERVAL_S":     "plan_poll_interval_s",
	"FATHOM_ALLOW_INSECURE_HTTP":      "allow_insecure_http",
	"FATHOM_IPERF3_PORT":              "iperf3.port",
	"FATHOM_IPERF3_BIND":              "iperf3.bind",
	"FATHOM_IPERF3_ENABLED":           "iperf3.enabled",
	"FATHOM_IPERF3_PERFSONAR_WINDOWS": "iperf3.perfsonar_windows",
	"FATHOM_ECHO_PORT":                "echo.port",
	"FATHOM_ECHO_BIND":                "echo.bind",
	"FATHOM_ECHO_ENABLED":             "echo.enabled",
	"FATHOM_TWAMP_ENABLED":            "twamp.enabled",
	"FATHOM_TWAMP_PORT":               "twamp.port",
	"FATHOM_TWAMP_BIND":               "twamp.bind",
	"FATHOM_TWAMP_RATE":               "twamp.rate",
	"FATHOM_TWAMP_CLOCK_SHARED":       "twamp.clock_shared",
	"FATHOM_TWAMP_CONTROL":            "twamp.control",
	"FATHOM_LOG_LEVEL":                "log.level",
	"FATHOM_LOG_FORMAT":               "log.format",
}

func setters(c *Config) map[string]func(string) error {
	str := func(p *string) func(string) error { return func(v string) error { *p = v; return nil } }
	num := func(p *int) func(string) error {
		return func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", v)
			}
			*p = n
			return nil
		}
	}
	decimal := func(p *float64) func(string) error {
		return func(v string) error {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", v)
			}
			*p = n
			return nil
		}
	}
	boolean := func(p *bool) func(string) error {
		return func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*p = b
			return nil
		}
	}
	return map[string]func(string) error{
		"server":                   str(&c.Server),
		"state_dir":                str(&c.StateDir),
		"plan_poll_interval_s":     num(&c.PlanPollIntervalS),
		"allow_insecure_http":      boolean(&c.AllowInsecureHTTP),
		"iperf3.port":              num(&c.Iperf3.Port),
		"iperf3.bind":              str(&c.Iperf3.Bind),
		"iperf3.enabled":           boolean(&c.Iperf3.Enabled),
		"iperf3.perfsonar_windows": boolean(&c.Iperf3.PerfsonarWindows),
		"echo.port":                num(&c.Echo.Port),
		"echo.bind":                str(&c.Echo.Bind),
		"echo.enabled":             boolean(&c.Echo.Enabled),
		"twamp.enabled":            boolean(&c.Twamp.Enabled),
		"twamp.port":               num(&c.Twamp.Port),
		"twamp.bind":               str(&c.Twamp.Bind),
		"twamp.rate":               decimal(&c.Twamp.Rate),
		"twamp.clock_shared":       boolean(&c.Twamp.ClockShared),
		"twamp.control":            boolean(&c.Twamp.Control),
		"log.level":                str(&c.Log.Level),
		"log.format":               str(&c.Log.Format),
	}
}

// flagNames maps flags to config fields.
var flagNames = map[string]string{
	"server":                   "server",
	"state-dir":                "state_dir",
	"plan-poll-interval-s":     "plan_poll_interval_s",
	"allow-insecure-http":      "allow_insecure_http",
	"iperf3-port":              "iperf3.port",
	"iperf3-bind":              "iperf3.bind",
	"iperf3-enabled":           "iperf3.enabled",
	"iperf3-perfsonar-windows": "iperf3.perfsonar_windows",
	"echo-port":                "echo.port",
	"echo-bind":                "echo.bind",
	"echo-enabled":             "echo.enabled",
	"twamp-enabled":            "twamp.enabled",
	"twamp-port":               "twamp.port",
	"twamp-bind":               "twamp.bind",
	"twamp-rate":               "twamp.rate",
	"twamp-clock-shared":       "twamp.clock_shared",
	"twamp-control":            "twamp.control",
	"log.level":                "log.level",
	"log.format":               "log.format",
}

// Load resolves defaults < file < environment < flags and validates the result.
func Load(args []string, getenv func(string) string) (Config, *Flags, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f := &Flags{fs: fs}
	fs.StringVar(&f.ConfigFile, "config", "", "YAML configuration file")
	fs.BoolVar(&f.Check, "config.check", false, "validate the configuration and exit")
	values := map[string]*string{}
	for name, field := range flagNames {
		values[name] = fs.String(name, "", "sets "+field)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, f, err
	}
	if fs.NArg() > 0 {
		return Config{}, f, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	cfg := Defaults()
	if f.ConfigFile != "" {
		data, err := os.ReadFile(f.ConfigFile)
		if err != nil {
			return cfg, f, fmt.Errorf("config: %w", err)
		}
		if cfg, err = Parse(data); err != nil {
			return cfg, f, err
		}
	}
	set := setters(&cfg)
	for env, field := range Env {
		if v := getenv(env); v != "" {
			if err := set[field](v); err != nil {
				return cfg, f, fmt.Errorf("%s (%s): %w", env, field, err)
			}
		}
	}
	var flagErr error
	fs.Visit(func(fl *flag.Flag) {
		if field, ok := flagNames[fl.Name]; ok && flagErr == nil {
			if err := set[field](*values[fl.Name]); err != nil {
				flagErr = fmt.Errorf("--%s: %w", fl.Name, err)
			}
		}
	})
	if flagErr != nil {
		return cfg, f, flagErr
	}
	return cfg, f, cfg.Validate()
}
