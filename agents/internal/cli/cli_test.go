package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/credential"
)

func runMain(env map[string]string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, "test", func(k string) string { return env[k] }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// enrollServer answers enrolment like the real server: one valid, single-use token.
func enrollServer(t *testing.T) *httptest.Server {
	t.Helper()
	used := false
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Token string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body.Token != "good" || used {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"detail":"enrolment token is invalid, expired or already used"}`)
			return
		}
		used = true
		_, _ = io.WriteString(w, `{"agent_id":"0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f","name":"athens","credential":"c"}`)
	}))
	t.Cleanup(server.Close)
	return server
}

func TestUsageAndVersion(t *testing.T) {
	if code, _, stderr := runMain(nil); code != 2 || !strings.Contains(stderr, "usage:") {
		t.Fatalf("no args: %d %q", code, stderr)
	}
	if code, _, stderr := runMain(nil, "frobnicate"); code != 1 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("unknown: %d %q", code, stderr)
	}
	if code, stdout, _ := runMain(nil, "version"); code != 0 || stdout != "fathom-agent test\n" {
		t.Fatalf("version: %d %q", code, stdout)
	}
}

func TestEnrollSavesTheCredentialOnceAndRefusesReuse(t *testing.T) {
	server := enrollServer(t)
	state := filepath.Join(t.TempDir(), "state")
	args := []string{"enroll", "--server", server.URL, "--token", "good", "--name", "athens", "--address", "198.18.1.2", "--state-dir", state}
	code, stdout, stderr := runMain(nil, args...)
	if code != 0 || !strings.Contains(stdout, "enrolled athens") {
		t.Fatalf("enroll: %d %q %q", code, stdout, stderr)
	}
	saved, err := credential.Load(state)
	if err != nil || saved.Server != server.URL {
		t.Fatalf("credential %+v %v", saved, err)
	}

	// A second enrolment into the same state directory is refused before the server is asked.
	if code, _, stderr := runMain(nil, args...); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("re-enrol: %d %q", code, stderr)
	}
	// The token is single use: with --force the server refuses it, and the credential stays.
	if code, _, stderr := runMain(nil, append(args, "--force")...); code != 1 || !strings.Contains(stderr, "already used") {
		t.Fatalf("reused token: %d %q", code, stderr)
	}
	if again, _ := credential.Load(state); again != saved {
		t.Fatal("a failed enrolment changed the stored credential")
	}
}

func TestEnrollRegistersEveryFamilysAddressPrimaryFirst(t *testing.T) {
	var got struct {
		Address        string   `json:"address"`
		OtherAddresses []string `json:"other_addresses"`
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		_, _ = io.WriteString(w, `{"agent_id":"0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f","name":"lisbon","credential":"c"}`)
	}))
	t.Cleanup(server.Close)
	env := map[string]string{"FATHOM_AGENT_ADDRESS": "198.18.9.9"}
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"two flags, which replace the environment's": {env, []string{"--address", "198.18.0.1", "--address", "2001:2::1"}},
		"the environment, comma-separated":           {map[string]string{"FATHOM_AGENT_ADDRESS": "198.18.0.1,2001:2::1"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got.Address, got.OtherAddresses = "", nil
			args := append([]string{"enroll", "--server", server.URL, "--token", "t", "--name", "lisbon",
				"--state-dir", filepath.Join(t.TempDir(), "state")}, tc.args...)
			if code, _, stderr := runMain(tc.env, args...); code != 0 {
				t.Fatalf("enroll: %d %q", code, stderr)
			}
			if got.Address != "198.18.0.1" || len(got.OtherAddresses) != 1 || got.OtherAddresses[0] != "2001:2::1" {
				t.Fatalf("registered %q and %v", got.Address, got.OtherAddresses)
			}
		})
	}
}

func TestEnrollRefusesBadInputWithoutWritingAnything(t *testing.T) {
	server := enrollServer(t)
	cases := map[string]struct {
		args []string
		want string
	}{
		"missing token":      {[]string{"--server", server.URL, "--name", "a", "--address", "x"}, "--token is required"},
		"missing address":    {[]string{"--server", server.URL, "--token", "good", "--name", "a"}, "--address is required"},
		"plain http remote":  {[]string{"--server", "http://198.18.0.1:8000", "--token", "good", "--name", "a", "--address", "x"}, "plain http"},
		"unknown token":      {[]string{"--server", server.URL, "--token", "bad", "--name", "a", "--address", "x"}, "enrolment failed: server answered 400"},
		"unreachable server": {[]string{"--server", "http://127.0.0.1:1", "--token", "good", "--name", "a", "--address", "x"}, "enrolment failed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			code, _, stderr := runMain(nil, append([]string{"enroll", "--state-dir", state}, tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("%d %q, want %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(credential.Path(state)); err == nil {
				t.Fatal("a credential was written")
			}
		})
	}
}

func TestEnrollReadsTheEnvironment(t *testing.T) {
	server := enrollServer(t)
	state := filepath.Join(t.TempDir(), "state")
	env := map[string]string{
		"FATHOM_SERVER": server.URL, "FATHOM_ENROLL_TOKEN": "good", "FATHOM_AGENT_NAME": "athens",
		"FATHOM_AGENT_ADDRESS": "198.18.1.2", "FATHOM_STATE_DIR": state,
	}
	if code, _, stderr := runMain(env, "enroll"); code != 0 {
		t.Fatalf("enroll from env: %q", stderr)
	}
}

func TestRunRefusesToStartWithoutCredentialOrWithBadConfig(t *testing.T) {
	state := t.TempDir()
	if code, _, stderr := runMain(nil, "run", "--state-dir", state); code != 1 || !strings.Contains(stderr, "not enrolled") {
		t.Fatalf("unenrolled run: %d %q", code, stderr)
	}
	if code, stdout, _ := runMain(nil, "run", "--state-dir", state, "--config.check"); code != 0 || stdout != "config ok\n" {
		t.Fatalf("config.check ok: %d %q", code, stdout)
	}
	if code, _, stderr := runMain(nil, "run", "--iperf3-port", "0", "--config.check"); code != 1 || !strings.Contains(stderr, "config invalid: iperf3.port") {
		t.Fatalf("config.check bad: %d %q", code, stderr)
	}
}
