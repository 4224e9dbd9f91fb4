package labcli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProbeVerbsRefuseBadCommandLinesWithExit2(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"probe"}, "probe needs a kind: flowsweep, hostfacts, latency, ping, throughput, trace"},
		{[]string{"probe", "latency", "--target", "127.0.0.1", "--spec", `{"report_interval_s": 5}`}, "invalid --spec: report_interval_s 5 out of range"},
		{[]string{"probe", "iperf3", "--target", "127.0.0.1"}, `unknown kind "iperf3"`},
		{[]string{"probe", "ping"}, "--target ADDR is required"},
		{[]string{"probe", "ping", "--target", "127.0.0.1", "--spec", "{count: 3}"}, "--spec is not JSON"},
		{[]string{"probe", "flowsweep", "--target", "127.0.0.1", "--spec", `{"flows": 1}`}, "invalid --spec: flows 1 out of range"},
		{[]string{"probe", "trace", "--target", "127.0.0.1", "--spec", `{"hops": 3}`}, `invalid --spec: json: unknown field "hops"`},
		{[]string{"probe", "ping", "--target", "127.0.0.1", "--peer-id", "peer-b"}, `--peer-id "peer-b" is not a UUID`},
		{[]string{"probe", "ping", "--target", "127.0.0.1", "--raw-out", "x"}, "flag provided but not defined: -raw-out"},
		{[]string{"probe", "throughput", "--target", "127.0.0.1", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"probe", "ping", "--target", "127.0.0.1", "extra"}, `unexpected argument "extra"`},
		{[]string{"probe", "hostfacts", "--target", "127.0.0.1"}, "flag provided but not defined: -target"},
		{[]string{"responder", "--port", "70000"}, "--port 70000 out of range"},
		{[]string{"responder", "--bind", "127.0.0.1"}, "flag provided but not defined: -bind"},
		{[]string{"iperf3-result", "--spec", `{"duration_s": 0}`}, "invalid --spec: duration_s 0"},
		{[]string{"iperf3-result", "file.json"}, `unexpected argument "file.json"`},
	}
	for _, tc := range cases {
		code, stdout, stderr := runLab(tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// runLabStdin is runLab with data on iperf3-result's stdin.
func runLabStdin(t *testing.T, data []byte, args ...string) (int, string, string) {
	t.Helper()
	stdin = bytes.NewReader(data)
	t.Cleanup(func() { stdin = os.Stdin })
	return runLab(args...)
}

func TestIperf3ResultPrintsTheAgentsSection(t *testing.T) {
	testdata := "../../probe/throughput/testdata/"
	read := func(name string) []byte {
		data, err := os.ReadFile(testdata + name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	cases := []struct {
		name      string
		stdin     []byte
		args      []string
		code      int
		intervals bool   // a section with intervals on stdout
		stderr    string // in the error line
	}{
		{"whole run", read("iperf3-3.12-tcp-single.json"), nil, 0, true, ""},
		{"whole run with the spec's options", read("iperf3-3.12-tcp-single.json"), []string{"--spec", `{"duration_s": 10}`}, 0, true, ""},
		{"interrupted run keeps its intervals", read("iperf3-3.12-interrupted-sigterm.json"), nil, 1, true, "iperf3 interrupted: "},
		{"iperf3 error document", read("iperf3-3.12-busy.json"), nil, 1, false, "iperf3 busy: "},
		{"not JSON", []byte("iperf3: error - unable to connect\n"), nil, 1, false, "not iperf3 JSON output"},
		{"empty", nil, nil, 1, false, "not iperf3 JSON output"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runLabStdin(t, tc.stdin, append([]string{"iperf3-result"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: exit %d, stderr %q", tc.name, code, stderr)
			continue
		}
		if !tc.intervals {
			if stdout != "" {
				t.Errorf("%s: printed %q", tc.name, stdout)
			}
			continue
		}
		var section map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &section); err != nil || !strings.HasSuffix(stdout, "}\n") {
			t.Fatalf("%s: %v in %q", tc.name, err, stdout)
		}
		var intervals []any
		_ = json.Unmarshal(section["intervals"], &intervals)
		if len(intervals) == 0 || section["summary"] == nil || section["options"] == nil || section["stream_summaries"] == nil {
			t.Errorf("%s: section %s", tc.name, stdout)
		}
		if tc.args != nil && !strings.Contains(string(section["options"]), `"duration_s":10`) {
			t.Errorf("%s: options %s", tc.name, section["options"])
		}
	}
}

func TestProbeHostfactsPrintsTheAgentsFacts(t *testing.T) {
	code, stdout, stderr := runLab("probe", "hostfacts")
	if code != 0 || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	var facts map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &facts); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"collected_at", "agent_version", "hostname", "kernel", "os", "iperf3_version",
		"iperf3_port", "iperf3_public_key", "interfaces", "sysctls"} {
		if _, ok := facts[key]; !ok {
			t.Errorf("no %q in %s", key, stdout)
		}
	}
	if string(facts["agent_version"]) != `"lab"` || string(facts["iperf3_port"]) != "5201" {
		t.Errorf("agent_version %s, iperf3_port %s", facts["agent_version"], facts["iperf3_port"])
	}
}

// TestHelperLab is fathom-lab in a child process: the responder is stopped by a signal.
func TestHelperLab(t *testing.T) {
	if os.Getenv("FATHOM_LAB_HELPER") != "1" {
		t.Skip("helper process")
	}
	os.Exit(Main(flag.Args(), os.Stdout, os.Stderr))
}

// startResponder runs `fathom-lab responder` on a free loopback port until it says ready.
// freeListenPort is a port free for both UDP and TCP on loopback, below Linux's ephemeral
// range (32768-60999): a port the kernel handed out for UDP could be any outgoing TCP
// connection's source port on a busy machine, and the responder needs both (a CI run saw the
// responder exit at once, unable to listen).
func freeListenPort(t *testing.T) int {
	t.Helper()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		udp, err := net.ListenPacket("udp", address)
		if err != nil {
			continue
		}
		tcp, err := net.Listen("tcp", address)
		udp.Close()
		if err != nil {
			continue
		}
		tcp.Close()
		return port
	}
	t.Fatal("no free port for the responder")
	return 0
}

func startResponder(t *testing.T) (int, *exec.Cmd) {
	t.Helper()
	port := freeListenPort(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLab$", "--", "responder", "--listen", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "FATHOM_LAB_HELPER=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if line != "ready\n" {
			_ = cmd.Wait()
			t.Fatalf("the responder said %q; stderr %q", line, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the responder did not say ready")
	}
	return port, cmd
}

func TestFlowsweepAgainstTheLabResponder(t *testing.T) {
	port, responder := startResponder(t)
	spec := `{"port":` + strconv.Itoa(port) + `,"flows":4,"samples_per_flow":2,"interval_ms":5}`
	code, stdout, stderr := runLab("probe", "flowsweep", "--target", "127.0.0.1", "--spec", spec,
		"--peer-id", "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f")
	if code != 0 {
		t.Fatalf("exit %d: %q", code, stderr)
	}
	var res struct {
		TestType  string  `json:"test_type"`
		TestID    string  `json:"test_id"`
		PeerID    *string `json:"peer_id"`
		Target    string  `json:"target"`
		Status    string  `json:"status"`
		Error     string  `json:"error"`
		FlowSweep struct {
			Port    int `json:"port"`
			Samples []struct {
				RTTMs *float64 `json:"rtt_ms"`
			} `json:"samples"`
		} `json:"flowsweep"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v in %q", err, stdout)
	}
	if res.Status != "ok" || res.TestType != "flowsweep" || res.TestID != "lab-flowsweep" || res.Target != "127.0.0.1" ||
		res.PeerID == nil || res.FlowSweep.Port != port || len(res.FlowSweep.Samples) != 8 {
		t.Fatalf("result %s", stdout)
	}
	for i, s := range res.FlowSweep.Samples {
		if s.RTTMs == nil {
			t.Errorf("sample %d unanswered: %s", i, stdout)
		}
	}
	// The responder keeps its port until SIGTERM, then exits 0.
	if err := responder.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := responder.Wait(); err != nil {
		t.Fatalf("the responder stopped with %v", err)
	}
}

func TestResponderRefusesAPortItCannotHave(t *testing.T) {
	held, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := strconv.Itoa(held.LocalAddr().(*net.UDPAddr).Port)
	code, stdout, stderr := runLab("responder", "--listen", "127.0.0.1", "--port", port)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "responder cannot listen on 127.0.0.1:"+port) {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
}

// A failed run is still a result (exit 0); --raw-out keeps what iperf3 printed, which
// iperf3-result turns into the same section the probe reported.
func TestProbeThroughputKeepsIperf3sOutput(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	dir := t.TempDir()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := strconv.Itoa(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()
	raw := filepath.Join(dir, "refused.json")
	code, stdout, stderr := runLab("probe", "throughput", "--target", "127.0.0.1", "--spec", `{"duration_s":1,"port":`+closedPort+`}`, "--raw-out", raw)
	if code != 0 || !strings.Contains(stdout, `"status":"failed"`) || !strings.Contains(stdout, `"error":"iperf3 refused: `) {
		t.Fatalf("refused run: exit %d, %q %q", code, stdout, stderr)
	}
	if data, err := os.ReadFile(raw); err != nil || !bytes.Contains(data, []byte(`"error":`)) {
		t.Fatalf("refused run's raw output: %v %q", err, data)
	}

	port := startIperf3Server(t)
	spec := `{"duration_s":1,"omit_s":1,"port":` + strconv.Itoa(port) + `}`
	raw = filepath.Join(dir, "run.json")
	code, stdout, stderr = runLab("probe", "throughput", "--target", "127.0.0.1", "--spec", spec, "--raw-out", raw)
	var res struct {
		Status     string         `json:"status"`
		Error      string         `json:"error"`
		Throughput map[string]any `json:"throughput"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil || res.Status != "ok" {
		t.Fatalf("exit %d, %v: %q %q", code, err, stdout, stderr)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	code, section, stderr := runLabStdin(t, data, "iperf3-result", "--spec", spec)
	var parsed map[string]any
	if err := json.Unmarshal([]byte(section), &parsed); code != 0 || err != nil {
		t.Fatalf("iperf3-result of the raw output: exit %d, %v, %q", code, err, stderr)
	}
	if !reflect.DeepEqual(parsed, res.Throughput) {
		t.Fatalf("the raw output parses to\n%s\nthe probe reported\n%s", section, stdout)
	}
}

// startIperf3Server runs `iperf3 -s` for one test on a free loopback port.
func startIperf3Server(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// --forceflush: without a terminal iperf3 would keep its "listening" banner buffered.
	server := exec.Command("iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", strconv.Itoa(port), "--forceflush")
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	listening := make(chan bool, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if strings.Contains(scanner.Text(), "listening") {
				listening <- true
				break
			}
		}
		for scanner.Scan() { // keep the pipe drained
		}
	}()
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("iperf3 -s did not start listening")
	}
	return port
}
