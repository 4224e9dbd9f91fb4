package labcli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runLab(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCheckAcceptsTheShippedScenarios(t *testing.T) {
	files, _ := filepath.Glob("../../../../deploy/lab/scenarios/*.yaml")
	code, stdout, stderr := runLab(append([]string{"check"}, files...)...)
	if code != 0 || strings.Count(stdout, ": ok") != len(files) {
		t.Fatalf("%d %q %q", code, stdout, stderr)
	}
}

func TestBadScenarioIsRefusedBeforeAnythingIsCreated(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nhosts: [{name: a}, {name: b}]\nlinks:\n  - {name: l, between: [a, c]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	for _, command := range []string{"check", "up", "run"} {
		args := []string{command, bad}
		if command != "check" {
			args = []string{command, "--state-dir", state, bad}
		}
		if command == "run" {
			args = append(args, "--", "true")
		}
		code, _, stderr := runLab(args...)
		if code != 1 || !strings.Contains(stderr, `bad.yaml:4: links[0].between[1]: no host named "c"`) {
			t.Fatalf("%s: %d %q", command, code, stderr)
		}
	}
	if _, err := os.Stat(state); err == nil {
		t.Fatal("a refused scenario created the state directory")
	}
}

func TestCommandsWithoutALabSayWhy(t *testing.T) {
	state := t.TempDir()
	cases := map[string][]string{
		"exec":  {"exec", "--state-dir", state, "a", "--", "true"},
		"set":   {"set", "--state-dir", state, "wan", "delay_ms=1"},
		"stats": {"stats", "--state-dir", state},
		"down":  {"down", "--state-dir", state},
	}
	for name, args := range cases {
		code, _, stderr := runLab(args...)
		if code != 1 || !strings.Contains(stderr, "no lab") {
			t.Errorf("%s: %d %q", name, code, stderr)
		}
	}
	if code, _, stderr := runLab("set", "--state-dir", state, "wan", "delay"); code != 1 || !strings.Contains(stderr, "not KEY=VALUE") {
		t.Errorf("set without =: %d %q", code, stderr)
	}
	if code, _, _ := runLab("frobnicate"); code != 2 {
		t.Error("unknown command must exit 2")
	}
}
