package iperfwindow

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
)

// logBuffer collects the opener's log lines across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// started is one server the opener started: when, and with which port.
type started struct {
	pid  int
	at   time.Time
	port int
}

// fake is an opener around a fake iperf3 that says it listens, then waits to be killed; a
// file "accept" in its directory makes it report a client's test and exit, a file
// "fail-once" makes it exit at once without a test, one time.
type fake struct {
	*Opener
	dir     string
	log     *logBuffer
	mu      sync.Mutex
	servers []started
}

func newFake(t *testing.T, reserved ...int) *fake {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
echo "$$ $*" >> %[1]s/args
echo "Server listening on $4 (test #1)"
if [ -f %[1]s/fail-once ]; then rm %[1]s/fail-once; echo "iperf3: error - unable to receive parameters from client:"; exit 1; fi
if [ -f %[1]s/accept ]; then echo "Accepted connection from 198.18.9.9, port 54802"; exit 0; fi
exec sleep 30
`, dir)
	binary := filepath.Join(dir, "iperf3")
	if err := os.WriteFile(binary, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fake{dir: dir, log: &logBuffer{}}
	f.Opener = New(binary, "", reserved, slog.New(slog.NewTextHandler(f.log, nil)))
	f.Lead = 0
	f.RetryDelay = 50 * time.Millisecond
	f.Started = func(pid int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.servers = append(f.servers, started{pid: pid, at: time.Now()})
	}
	return f
}

// starts are the servers started so far, with the port each was given.
func (f *fake) starts(t *testing.T) []started {
	t.Helper()
	f.mu.Lock()
	servers := slices.Clone(f.servers)
	f.mu.Unlock()
	data, _ := os.ReadFile(filepath.Join(f.dir, "args"))
	ports := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		pid, _ := strconv.Atoi(fields[0])
		ports[pid], _ = strconv.Atoi(fields[4]) // pid -s -1 -p PORT
	}
	// A server counts once its fake has written its arguments: Started fires when the process
	// starts, a moment before the script's first line runs.
	written := servers[:0]
	for _, server := range servers {
		if port, ok := ports[server.pid]; ok {
			server.port = port
			written = append(written, server)
		}
	}
	return written
}

func (f *fake) touch(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// run starts the opener and returns a function that stops it and waits for Run to return.
func (f *fake) run(t *testing.T) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	stop := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
	t.Cleanup(func() { cancel(); <-done })
	return stop
}

func window(id string, port int, start, end time.Time) plan.Iperf3Window {
	return plan.Iperf3Window{SlotID: id, StartAt: start, EndAt: end, Port: port, PeerName: "ps-" + id, PeerAddress: "198.18.9.9"}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func eventually(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
	}
}

func TestArgs(t *testing.T) {
	o := New("iperf3", "198.18.1.2", nil, slog.Default())
	w := window("a", 5203, time.Now(), time.Now().Add(time.Minute))
	if got := strings.Join(o.Args(w), " "); got != "-s -1 -p 5203 -B 198.18.1.2 --forceflush" {
		t.Fatalf("args %q", got)
	}
	o.Bind = ""
	if got := strings.Join(o.Args(w), " "); got != "-s -1 -p 5203 --forceflush" {
		t.Fatalf("args without bind %q", got)
	}
}

func TestAcceptedFrom(t *testing.T) {
	for line, want := range map[string]string{
		"Accepted connection from 198.18.9.9, port 54802":        "198.18.9.9",
		"Accepted connection from ::ffff:198.18.9.9, port 1":     "198.18.9.9",
		"Accepted connection from 2001:db8::9, port 54802":       "2001:db8::9",
		"Accepted connection from somewhere, port 1":             "invalid IP",
		"Server listening on 5203 (test #1)":                     "",
		"[  5] local 127.0.0.1 port 5203 connected to 127.0.0.1": "",
	} {
		addr, ok := acceptedFrom(line)
		if got := map[bool]string{true: addr.String(), false: ""}[ok]; got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// The server opens Lead before the node's run and is killed at the window's end.
func TestAWindowOpensLeadBeforeItsStartAndClosesAtItsEnd(t *testing.T) {
	f := newFake(t)
	// A lead long against any scheduling delay: a timer never fires early, but on two loaded
	// cores under -race it fired 337 ms late against a 300 ms lead (a CI run). Opening at
	// least half the lead before the start tells a window that opens with its lead from one
	// that opens at its start, whatever the machine's load.
	f.Lead = 2 * time.Second
	now := time.Now()
	start, end := now.Add(2500*time.Millisecond), now.Add(3200*time.Millisecond)
	f.Apply([]plan.Iperf3Window{window("a", 5203, start, end)})
	f.run(t)

	eventually(t, 5*time.Second, "the window's server started", func() bool { return len(f.starts(t)) == 1 })
	first := f.starts(t)[0]
	if opened := first.at.Sub(start); opened < -f.Lead-20*time.Millisecond || opened > -f.Lead/2 {
		t.Fatalf("opened %s from the start, want about -%s", opened, f.Lead)
	}
	if first.port != 5203 {
		t.Fatalf("port %d", first.port)
	}
	eventually(t, 5*time.Second, "the server killed at the end", func() bool { return !alive(first.pid) })
	if closed := time.Since(end); closed < 0 {
		t.Fatalf("closed %s before the end", -closed)
	}
	eventually(t, 5*time.Second, "the window's closing logged", func() bool {
		return strings.Contains(f.log.String(), `reason="its end passed"`)
	})
	time.Sleep(200 * time.Millisecond)
	if n := len(f.starts(t)); n != 1 {
		t.Fatalf("%d servers for one window", n)
	}
	logs := f.log.String()
	for _, want := range []string{
		`msg="perfSONAR iperf3 window open" slot=a peer=ps-a peer_address=198.18.9.9 port=5203`,
		`msg="perfSONAR iperf3 window closed" slot=a peer=ps-a peer_address=198.18.9.9 port=5203 reason="its end passed"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}

// Windows already over are never opened; overlapping ones (one port, one server) open one
// after the other.
func TestWindowsOverAreSkippedAndOthersOpenOneAtATime(t *testing.T) {
	f := newFake(t)
	now := time.Now()
	// Windows of seconds: each must still be open when a loaded machine gets round to
	// serving it (a timer fired 337 ms late under -race in CI).
	f.Apply([]plan.Iperf3Window{
		window("later", 5205, now.Add(200*time.Millisecond), now.Add(4*time.Second)),
		window("over", 5203, now.Add(-time.Minute), now.Add(-time.Second)),
		window("first", 5204, now.Add(100*time.Millisecond), now.Add(1500*time.Millisecond)),
	})
	f.run(t)
	eventually(t, 8*time.Second, "both windows served", func() bool { return len(f.starts(t)) == 2 })
	servers := f.starts(t)
	if servers[0].port != 5204 || servers[1].port != 5205 {
		t.Fatalf("ports in order %d, %d; want 5204 then 5205", servers[0].port, servers[1].port)
	}
	if gap := servers[1].at.Sub(now); gap < 1500*time.Millisecond {
		t.Fatalf("the second window opened %s after now, before the first closed", gap)
	}
	eventually(t, 5*time.Second, "the second closed", func() bool { return !alive(servers[1].pid) })
	if strings.Contains(f.log.String(), "slot=over") {
		t.Fatalf("a window already over was opened:\n%s", f.log.String())
	}
}

// A new plan replaces the schedule: an open window it drops closes at once, a window it adds
// opens, and a later end keeps the open window open longer.
func TestANewPlanReplacesTheSchedule(t *testing.T) {
	f := newFake(t)
	now := time.Now()
	f.Apply([]plan.Iperf3Window{window("a", 5203, now, now.Add(time.Hour))})
	f.run(t)
	eventually(t, 5*time.Second, "window a open", func() bool { return len(f.starts(t)) == 1 })
	a := f.starts(t)[0]

	f.Apply([]plan.Iperf3Window{window("b", 5204, time.Now().Add(100*time.Millisecond), time.Now().Add(4*time.Second))})
	eventually(t, 5*time.Second, "window a closed", func() bool { return !alive(a.pid) })
	// The server is reaped before its window logs why it closed.
	closed := `slot=a peer=ps-a peer_address=198.18.9.9 port=5203 reason="the plan dropped or moved it"`
	eventually(t, 5*time.Second, "window a's closing logged", func() bool { return strings.Contains(f.log.String(), closed) })
	eventually(t, 5*time.Second, "window b open", func() bool { return len(f.starts(t)) == 2 })
	b := f.starts(t)[1]
	if b.port != 5204 {
		t.Fatalf("port %d", b.port)
	}
	// The same window with a later end: the server stays up past the old end (read back from
	// the plan, not assumed: the old end may be near by now on a loaded machine).
	oldEnd := time.Now().Add(500 * time.Millisecond)
	f.Apply([]plan.Iperf3Window{window("b", 5204, b.at, oldEnd)})
	f.Apply([]plan.Iperf3Window{window("b", 5204, b.at, oldEnd.Add(5*time.Second))})
	time.Sleep(time.Until(oldEnd) + time.Second)
	if !alive(b.pid) || len(f.starts(t)) != 2 {
		t.Fatal("the window closed at its old end or was reopened")
	}
	f.Apply(nil) // an expired plan
	eventually(t, 5*time.Second, "window b closed", func() bool { return !alive(b.pid) })
}

// A window on the port of the agent's own iperf3 server or echo responder is refused.
func TestAWindowOnTheAgentsOwnPortIsRefused(t *testing.T) {
	f := newFake(t, 5201, 5202)
	now := time.Now()
	f.Apply([]plan.Iperf3Window{window("own", 5201, now, now.Add(time.Hour)), window("echo", 5202, now, now.Add(time.Hour))})
	f.run(t)
	time.Sleep(300 * time.Millisecond)
	if n := len(f.starts(t)); n != 0 {
		t.Fatalf("%d servers started on the agent's own ports", n)
	}
	for _, want := range []string{"slot=own peer=ps-own port=5201", "slot=echo peer=ps-echo port=5202"} {
		if !strings.Contains(f.log.String(), `msg="perfSONAR iperf3 window refused: its port is one of this agent's own listeners" `+want) {
			t.Errorf("log lacks the refusal of %s:\n%s", want, f.log.String())
		}
	}
}

// Shutdown kills an open window's server before Run returns.
func TestShutdownKillsTheServer(t *testing.T) {
	f := newFake(t)
	f.Apply([]plan.Iperf3Window{window("a", 5203, time.Now(), time.Now().Add(time.Hour))})
	stop := f.run(t)
	eventually(t, 5*time.Second, "window open", func() bool { return len(f.starts(t)) == 1 })
	stop()
	if pid := f.starts(t)[0].pid; alive(pid) {
		t.Fatalf("server %d still running after Run returned", pid)
	}
	if !strings.Contains(f.log.String(), `reason="the agent is stopping"`) {
		t.Fatalf("log:\n%s", f.log.String())
	}
}

// One test per window: after the node's test the window stays closed; a server that exits
// before any test (a stray connection, a busy port) is reopened.
func TestOneTestPerWindowAndReopenedUntilThen(t *testing.T) {
	f := newFake(t)
	f.touch(t, "fail-once")
	f.touch(t, "accept")
	now := time.Now()
	f.Apply([]plan.Iperf3Window{window("a", 5203, now, now.Add(time.Hour))})
	f.run(t)
	eventually(t, 5*time.Second, "reopened after the failure", func() bool { return len(f.starts(t)) == 2 })
	eventually(t, 5*time.Second, "closed after the test", func() bool {
		return strings.Contains(f.log.String(), `reason="the node's test is over"`)
	})
	time.Sleep(300 * time.Millisecond)
	if n := len(f.starts(t)); n != 2 {
		t.Fatalf("%d servers; want the failed one and the tested one", n)
	}
	logs := f.log.String()
	for _, want := range []string{
		`msg="perfSONAR iperf3 window's server exited before a test came; reopening it"`,
		`output="iperf3: error - unable to receive parameters from client:"`,
		`msg="perfSONAR node's test connected" slot=a peer=ps-a peer_address=198.18.9.9 port=5203 from=198.18.9.9`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err == nil {
		conn.Close()
	}
	return err == nil
}

// With the real iperf3 on loopback: a client without credentials (as pScheduler's; reverse,
// as in A->P) completes its test in the window, and the port is closed after it.
func TestARealIperf3ClientTestsInTheWindow(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	port := freePort(t)
	logs := &logBuffer{}
	o := New("iperf3", "127.0.0.1", nil, slog.New(slog.NewTextHandler(logs, nil)))
	pids := make(chan int, 4)
	o.Lead, o.Started = 0, func(pid int) { pids <- pid }
	now := time.Now()
	o.Apply([]plan.Iperf3Window{{SlotID: "a", StartAt: now, EndAt: now.Add(30 * time.Second), Port: port,
		PeerName: "ps", PeerAddress: "127.0.0.1"}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	// No probing connection before the test: a one-off server would take it for its client.
	pid := <-pids
	var client []byte
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		client, err = exec.Command("iperf3", "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-R", "-J").CombinedOutput()
		if !bytes.Contains(client, []byte("Connection refused")) { // with -J, iperf3 may exit 0 all the same
			break
		}
		time.Sleep(100 * time.Millisecond) // not listening yet
	}
	if err != nil || !bytes.Contains(client, []byte(`"sum_received"`)) {
		t.Fatalf("client: %v\n%s", err, client)
	}
	eventually(t, 10*time.Second, "the server gone after the test", func() bool { return !alive(pid) })
	if listening(port) {
		t.Fatal("the window's port is still open after its test")
	}
	// The window logs its close after it reaps the server, a moment after the pid is gone.
	eventually(t, 5*time.Second, "the close logged", func() bool {
		return strings.Contains(logs.String(), `reason="the node's test is over"`)
	})
	if !strings.Contains(logs.String(), `from=127.0.0.1`) {
		t.Errorf("log lacks the node's connection:\n%s", logs.String())
	}
	select {
	case again := <-pids:
		t.Fatalf("the window was reopened after its test (pid %d)", again)
	default:
	}
}
