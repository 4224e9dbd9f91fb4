package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func noEnv(string) string { return "" }

func TestDefaultsAreValid(t *testing.T) {
	cfg, _, err := Load(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg != Defaults() {
		t.Fatalf("empty load differs from defaults: %+v", cfg)
	}
}

func TestTheExampleFileIsValid(t *testing.T) {
	cfg, flags, err := Load([]string{"--config", "../../fathom-agent.example.yaml", "--config.check"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !flags.Check || cfg != Defaults() {
		t.Fatalf("the example must show every default: %+v", cfg)
	}
}

func TestPrecedenceFileThenEnvThenFlags(t *testing.T) {
	path := write(t, "state_dir: /from/file\niperf3:\n  port: 5301\n  bind: 198.18.1.2\nlog:\n  level: debug\n")
	env := map[string]string{"FATHOM_IPERF3_PORT": "5401", "FATHOM_LOG_LEVEL": "warn"}
	cfg, _, err := Load([]string{"--config", path, "--log.level", "error"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StateDir != "/from/file" || cfg.Iperf3.Bind != "198.18.1.2" {
		t.Fatalf("file values lost: %+v", cfg)
	}
	if cfg.Iperf3.Port != 5401 {
		t.Fatalf("env must beat the file: port %d", cfg.Iperf3.Port)
	}
	if cfg.Log.Level != "error" {
		t.Fatalf("flags must beat env: level %q", cfg.Log.Level)
	}
	if cfg.Ping.Binary != "ping" {
		t.Fatal("unset keys must keep their defaults")
	}
}

func TestBadConfigurationsNameTheProblem(t *testing.T) {
	cases := map[string]struct {
		file string
		args []string
		env  map[string]string
		want string
	}{
		"unknown key":       {file: "iperf3:\n  prot: 5201\n", want: "field prot not found"},
		"wrong type":        {file: "iperf3:\n  port: many\n", want: "cannot unmarshal"},
		"not yaml":          {file: "iperf3: [\n", want: "config:"},
		"port out of range": {file: "iperf3:\n  port: 70000\n", want: "iperf3.port: 70000"},
		"tiny spool":        {file: "spool:\n  max_bytes: 1000\n", want: "spool.max_bytes"},
		"batch too large":   {file: "upload:\n  batch_size: 501\n", want: "upload.batch_size"},
		"poll too fast":     {file: "plan_poll_interval_s: 1\n", want: "plan_poll_interval_s"},
		"log level":         {args: []string{"--log.level", "loud"}, want: `log.level: "loud"`},
		"env not a number":  {env: map[string]string{"FATHOM_IPERF3_PORT": "abc"}, want: "FATHOM_IPERF3_PORT (iperf3.port)"},
		"env not a bool":    {env: map[string]string{"FATHOM_ALLOW_INSECURE_HTTP": "maybe"}, want: "not true or false"},
		"flag not a number": {args: []string{"--iperf3-port", "x"}, want: "--iperf3-port"},
		"stray argument":    {args: []string{"extra"}, want: "unexpected arguments: extra"},
		"unknown flag":      {args: []string{"--nope"}, want: "flag provided but not defined"},
		"missing file":      {args: []string{"--config", "/nonexistent.yaml"}, want: "no such file"},
		"empty state dir":   {args: []string{"--state-dir", ""}, want: "state_dir: must be set"},
		"empty ping binary": {file: "ping:\n  binary: \"\"\n", want: "ping.binary"},
		"bad log format":    {file: "log:\n  format: xml\n", want: "log.format"},
		"echo port":         {file: "echo:\n  port: 0\n", want: "echo.port: 0 out of range"},
		"echo on iperf3":    {args: []string{"--echo-port", "5201"}, want: "echo.port: 5201 is iperf3.port too"},
		"echo env bool":     {env: map[string]string{"FATHOM_ECHO_ENABLED": "sometimes"}, want: "FATHOM_ECHO_ENABLED (echo.enabled)"},
		"empty trace":       {file: "trace:\n  binary: \"\"\n", want: "trace.binary"},
		"twamp port":        {file: "twamp:\n  port: 65536\n", want: "twamp.port: 65536 out of range"},
		"twamp on echo":     {args: []string{"--twamp-port", "5202"}, want: "twamp.port: 5202 is echo.port too"},
		"twamp on iperf3":   {env: map[string]string{"FATHOM_TWAMP_PORT": "5201"}, want: "twamp.port: 5201 is iperf3.port too"},
		"twamp rate zero":   {file: "twamp:\n  rate: 0\n", want: "twamp.rate: 0 out of range"},
		"twamp rate huge":   {args: []string{"--twamp-rate", "20000"}, want: "twamp.rate: 20000 out of range"},
		"twamp rate NaN":    {env: map[string]string{"FATHOM_TWAMP_RATE": "NaN"}, want: "twamp.rate: NaN out of range"},
		"twamp rate word":   {env: map[string]string{"FATHOM_TWAMP_RATE": "fast"}, want: "FATHOM_TWAMP_RATE (twamp.rate)"},
		"twamp shared bool": {env: map[string]string{"FATHOM_TWAMP_CLOCK_SHARED": "yes"}, want: "FATHOM_TWAMP_CLOCK_SHARED (twamp.clock_shared)"},
		"twamp unknown key": {file: "twamp:\n  clock: shared\n", want: "field clock not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", write(t, tc.file)}, args...)
			}
			_, _, err := Load(args, func(k string) string { return tc.env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestEchoResponderSettings(t *testing.T) {
	cfg, _, err := Load(nil, noEnv)
	if err != nil || !cfg.Echo.Enabled || cfg.Echo.Port != 5202 || cfg.Echo.Bind != "" || cfg.Trace.Binary != "traceroute" {
		t.Fatalf("defaults %+v %v", cfg.Echo, err)
	}
	path := write(t, "echo:\n  port: 6202\n  bind: 198.18.1.2\n")
	env := map[string]string{"FATHOM_ECHO_PORT": "7202"}
	cfg, _, err = Load([]string{"--config", path, "--echo-enabled", "false"}, func(k string) string { return env[k] })
	if err != nil || cfg.Echo.Enabled || cfg.Echo.Port != 7202 || cfg.Echo.Bind != "198.18.1.2" {
		t.Fatalf("echo %+v %v", cfg.Echo, err)
	}
	// A disabled responder's port is not checked, nor its clash with iperf3's.
	if _, _, err := Load([]string{"--echo-enabled", "false", "--echo-port", "5201"}, noEnv); err != nil {
		t.Fatal(err)
	}
}

func TestTwampReflectorSettings(t *testing.T) {
	cfg, _, err := Load(nil, noEnv)
	want := Twamp{Enabled: true, Port: 862, Bind: "", Rate: 100, ClockShared: false, Control: true}
	if err != nil || cfg.Twamp != want {
		t.Fatalf("defaults %+v %v", cfg.Twamp, err)
	}
	path := write(t, "twamp:\n  port: 8620\n  bind: 198.18.1.2\n  rate: 50\n")
	env := map[string]string{"FATHOM_TWAMP_PORT": "8621", "FATHOM_TWAMP_RATE": "12.5", "FATHOM_TWAMP_CLOCK_SHARED": "true"}
	cfg, _, err = Load([]string{"--config", path, "--twamp-bind", "198.18.1.3", "--twamp-port", "8622"}, func(k string) string { return env[k] })
	want = Twamp{Enabled: true, Port: 8622, Bind: "198.18.1.3", Rate: 12.5, ClockShared: true, Control: true}
	if err != nil || cfg.Twamp != want {
		t.Fatalf("file < env < flags: %+v %v", cfg.Twamp, err)
	}
	cfg, _, err = Load([]string{"--twamp-enabled", "false", "--twamp-clock-shared", "true"}, noEnv)
	if err != nil || cfg.Twamp.Enabled || !cfg.Twamp.ClockShared {
		t.Fatalf("flags %+v %v", cfg.Twamp, err)
	}
	cfg, _, err = Load([]string{"--twamp-control", "false"}, noEnv)
	if err != nil || cfg.Twamp.Control || !cfg.Twamp.Enabled {
		t.Fatalf("--twamp-control false: %+v %v", cfg.Twamp, err)
	}
	cfg, _, err = Load(nil, func(k string) string { return map[string]string{"FATHOM_TWAMP_CONTROL": "0"}[k] })
	if err != nil || cfg.Twamp.Control {
		t.Fatalf("FATHOM_TWAMP_CONTROL=0: %+v %v", cfg.Twamp, err)
	}
	// A disabled reflector's port and rate are not checked, nor its clash with the others'.
	if _, _, err := Load([]string{"--twamp-enabled", "false", "--twamp-port", "5202", "--twamp-rate", "0"}, noEnv); err != nil {
		t.Fatal(err)
	}
	// Nor a clash with a disabled echo responder's or iperf3 server's port.
	if _, _, err := Load([]string{"--echo-enabled", "false", "--twamp-port", "5202"}, noEnv); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load([]string{"--iperf3-enabled", "false", "--twamp-port", "5201"}, noEnv); err != nil {
		t.Fatal(err)
	}
}

func TestPerfsonarWindowsAreOnByDefaultAndCanBeTurnedOff(t *testing.T) {
	if !Defaults().Iperf3.PerfsonarWindows {
		t.Fatal("perfSONAR windows must be on by default")
	}
	for name, load := range map[string]func() (Config, error){
		"file": func() (Config, error) {
			cfg, _, err := Load([]string{"--config", write(t, "iperf3:\n  perfsonar_windows: false\n")}, noEnv)
			return cfg, err
		},
		"env": func() (Config, error) {
			cfg, _, err := Load(nil, func(k string) string {
				return map[string]string{"FATHOM_IPERF3_PERFSONAR_WINDOWS": "false"}[k]
			})
			return cfg, err
		},
		"flag": func() (Config, error) {
			cfg, _, err := Load([]string{"--iperf3-perfsonar-windows", "false"}, noEnv)
			return cfg, err
		},
	} {
		if cfg, err := load(); err != nil || cfg.Iperf3.PerfsonarWindows {
			t.Errorf("%s: perfsonar_windows %v, error %v", name, cfg.Iperf3.PerfsonarWindows, err)
		}
	}
	if _, _, err := Load(nil, func(k string) string {
		return map[string]string{"FATHOM_IPERF3_PERFSONAR_WINDOWS": "sometimes"}[k]
	}); err == nil || !strings.Contains(err.Error(), "FATHOM_IPERF3_PERFSONAR_WINDOWS (iperf3.perfsonar_windows)") {
		t.Fatalf("a bad value: %v", err)
	}
}

func TestEveryEnvVariableAndFlagHasASetter(t *testing.T) {
	set := setters(&Config{})
	for env, field := range Env {
		if set[field] == nil {
			t.Errorf("%s sets unknown field %s", env, field)
		}
	}
	for flagName, field := range flagNames {
		if set[field] == nil {
			t.Errorf("--%s sets unknown field %s", flagName, field)
		}
	}
}
