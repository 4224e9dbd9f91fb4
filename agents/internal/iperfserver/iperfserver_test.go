package iperfserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
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
