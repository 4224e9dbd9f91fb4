package iperfserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			conn.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("iperf3 is not listening on port %d", port)
}

func TestTheServerIsRestartedAfterItDies(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	port := freePort(t)
	pids := make(chan int, 4)
	s := &Server{
		Binary: "iperf3", Port: port, Bind: "127.0.0.1",
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
		Started: func(pid int) { pids <- pid },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	first := <-pids
	waitListening(t, port)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case second := <-pids:
		if second == first {
			t.Fatal("same pid after restart")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the killed server was not restarted")
	}
	waitListening(t, port)

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		conn.Close()
		t.Fatal("iperf3 still listening after the agent stopped")
	}
}

func TestArgs(t *testing.T) {
	s := &Server{Port: 5202, Bind: "198.18.1.2"}
	if got := s.Args(); len(got) != 5 || got[2] != "5202" || got[4] != "198.18.1.2" {
		t.Fatalf("args %v", got)
	}
	s.Bind = ""
	if got := s.Args(); len(got) != 3 {
		t.Fatalf("args without bind %v", got)
	}
}

// A client asking for a longer test than any slot holds is cut off: the server is
// restarted once the test outlasts MaxTest.
func TestATestLongerThanMaxTestIsCutOff(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	port := freePort(t)
	pids := make(chan int, 4)
	s := &Server{
		Binary: "iperf3", Port: port, Bind: "127.0.0.1", MaxTest: 2 * time.Second,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
		Started: func(pid int) { pids <- pid },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-pids
	for deadline := time.Now().Add(10 * time.Second); !listeningOn(port); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("iperf3 is not listening")
		}
	}
	began := time.Now()
	client := exec.Command("iperf3", "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "30", "-b", "10M", "-J")
	_ = client.Run()
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("a 30 s test ran %s against a 2 s limit", took.Round(time.Second))
	}
	select {
	case <-pids:
	case <-time.After(10 * time.Second):
		t.Fatal("the server was not restarted after cutting the test off")
	}
}

// listeningOn reads /proc/net/tcp: a probe connection would count as a test.
func listeningOn(port int) bool {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	suffix := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 3 && strings.HasSuffix(fields[1], suffix) && fields[3] == "0A" {
			return true
		}
	}
	return false
}
