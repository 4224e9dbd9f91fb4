// Package iperfserver keeps an iperf3 server running so peers can test throughput to this
// agent, restarting it with back-off whenever it exits.
package iperfserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/childproc"
	"github.com/fathom-net/fathom/agents/internal/restart"
)

// TimeSkewThreshold is how far (seconds) a client's clock may differ from the server's: iperf3
// refuses older credentials as replays. Its default, 10 s, is tighter than agents' clocks.
const TimeSkewThreshold = 60

// Server supervises `iperf3 -s`.
type Server struct {
	Binary string
	Port   int
	Bind   string
	// Auth, when set, admits only the clients in its users file; nil runs the server open.
	Auth *Auth
	// MaxTest stops a test that runs longer (the server is restarted): iperf3's server has
	// no limit of its own on a client's -t. Zero: no limit.
	MaxTest    time.Duration
	Log        *slog.Logger
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Started is told the PID of every server it starts (tests).
	Started func(pid int)
}

// Args is the server's command line.
func (s *Server) Args() []string {
	// -J: a reverse run's client asks for the server's own account (--get-server-output),
	// and only a JSON server gives it as JSON, with the sending side's TCP_INFO (RTT,
	// windows, retransmits) that the receiving client cannot see.
	args := []string{"-s", "-J", "-p", strconv.Itoa(s.Port)}
	if s.Bind != "" {
		args = append(args, "-B", s.Bind)
	}
	if s.Auth != nil {
		args = append(args, "--rsa-private-key-path", s.Auth.KeyPath, "--authorized-users-path", s.Auth.UsersPath,
			"--time-skew-threshold", strconv.Itoa(TimeSkewThreshold))
	}
	return args
}

// watch drains the server's output until it closes, and stops the server when one test
// outlasts MaxTest. A JSON server (-J) prints a test only when it ends, so a test is seen
// from the kernel's side instead: a connection established on the server's port (its
// control connection lasts the whole test).
func (s *Server) watch(stdout io.Reader, process *os.Process) {
	done := make(chan struct{})
	defer close(done)
	if s.MaxTest > 0 {
		go func() {
			tick := time.NewTicker(min(s.MaxTest/4, 5*time.Second))
			defer tick.Stop()
			var testSince time.Time
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				switch {
				case !established(s.Bind, s.Port):
					testSince = time.Time{}
				case testSince.IsZero():
					testSince = time.Now()
				case time.Since(testSince) > s.MaxTest:
					s.Log.Warn("a test outlasted the longest planned slot; restarting the iperf3 server", "max_test", s.MaxTest)
					_ = process.Kill()
					return
				}
			}
		}()
	}
	_, _ = io.Copy(io.Discard, stdout)
}

// established reports whether a TCP connection on this server's address and port is
// established in this network namespace. With an IPv4 bind address the address must match
// too: agents on one host's loopback share a port.
func established(bind string, port int) bool {
	return socketInState(bind, port, tcpEstablished)
}

// The kernel's TCP states as /proc/net/tcp writes them.
const (
	tcpEstablished = "01"
	tcpListen      = "0A"
)

// socketInState reports whether a TCP socket on the address (any, when bind is empty or not
// IPv4) and port is in the state, in /proc/net/tcp or tcp6.
func socketInState(bind string, port int, state string) bool {
	local := fmt.Sprintf(":%04X", port)
	if ip := net.ParseIP(bind).To4(); ip != nil {
		local = fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], port)
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 3 && strings.HasSuffix(fields[1], local) && fields[3] == state {
				return true
			}
		}
	}
	return false
}

// Run keeps the server alive until ctx ends, then stops it; a server that ran a while before
// dying is restarted promptly.
func (s *Server) Run(ctx context.Context) {
	restart.Loop(ctx, s.MinBackoff, s.MaxBackoff, s.runOnce, func(err error, retryIn time.Duration) {
		s.Log.Warn("iperf3 server exited; restarting", "error", err, "retry_in", retryIn)
	})
}

// runOnce runs one iperf3 server process until it exits or ctx ends.
func (s *Server) runOnce(ctx context.Context) error {
	cmd := childproc.Command(ctx, s.Binary, append(s.Args(), "--forceflush")...)
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return err
	}
	s.Log.Info("iperf3 server started", "port", s.Port, "bind", s.Bind, "pid", cmd.Process.Pid,
		"authentication", s.Auth != nil, "max_test", s.MaxTest)
	if s.Started != nil {
		s.Started(cmd.Process.Pid)
	}
	s.watch(stdout, cmd.Process)
	return cmd.Wait()
}
