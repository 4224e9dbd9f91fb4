package iperfserver

import (
	"context"
	"encoding/json"
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
	if got := s.Args(); len(got) != 6 || got[1] != "-J" || got[3] != "5202" || got[5] != "198.18.1.2" {
		t.Fatalf("args %v", got)
	}
	s.Bind = ""
	if got := s.Args(); len(got) != 4 {
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

// A reverse run's client receives; the server sends and only it has the sending side's
// TCP_INFO. Its JSON comes back with --get-server-output because the server runs with -J.
func TestAReverseRunGetsTheSendingServersTCPInfo(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	port := freePort(t)
	s := &Server{
		Binary: "iperf3", Port: port, Bind: "127.0.0.1",
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); !listeningOn(port); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("iperf3 is not listening")
		}
	}
	out, err := exec.Command("iperf3", "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-R",
		"--get-server-output", "-J").Output()
	if err != nil {
		t.Fatalf("reverse run: %v", err)
	}
	var doc struct {
		ServerOutputJSON *struct {
			Intervals []struct {
				Streams []struct {
					RTT    *int64 `json:"rtt"`
					Sender bool   `json:"sender"`
				} `json:"streams"`
			} `json:"intervals"`
		} `json:"server_output_json"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.ServerOutputJSON == nil {
		t.Fatalf("no server_output_json in the reverse run's document (err %v)", err)
	}
	stream := doc.ServerOutputJSON.Intervals[0].Streams[0]
	if !stream.Sender || stream.RTT == nil {
		t.Fatalf("the server's interval has no sender TCP_INFO: %+v", stream)
	}
}

// Another server's test on the same port at another address (agents sharing a host's
// loopback) is not this server's test.
func TestOnlyThisServersAddressCounts(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	port := listener.Addr().(*net.TCPAddr).Port
	client, err := net.Dial("tcp", listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := listener.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if !established("127.0.0.3", port) || !established("", port) {
		t.Fatal("the established connection on 127.0.0.3 is not seen")
	}
	if established("127.0.0.2", port) {
		t.Fatal("a connection on 127.0.0.3 counted for a server on 127.0.0.2")
	}
}

// listeningOn reads /proc/net/tcp: a probe connection would count as a test.
func listeningOn(port int) bool {
	return socketInState("", port, tcpListen)
}
