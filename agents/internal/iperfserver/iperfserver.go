// Package iperfserver keeps an iperf3 server running so peers can test throughput to this
// agent, restarting it with back-off whenever it exits.
package iperfserver

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/childproc"
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
	args := []string{"-s", "-p", strconv.Itoa(s.Port)}
	if s.Bind != "" {
		args = append(args, "-B", s.Bind)
	}
	if s.Auth != nil {
		args = append(args, "--rsa-private-key-path", s.Auth.KeyPath, "--authorized-users-path", s.Auth.UsersPath,
			"--time-skew-threshold", strconv.Itoa(TimeSkewThreshold))
	}
	return args
}

// watch follows the server's output until it closes, stopping the server when one test
// outlasts MaxTest: iperf3 prints "Accepted connection" as a test starts and "Server
// listening" when it is ready for the next.
func (s *Server) watch(stdout io.Reader, process *os.Process) {
	var mu sync.Mutex
	var testSince time.Time
	done := make(chan struct{})
	defer close(done)
	if s.MaxTest > 0 {
		go func() {
			tick := time.NewTicker(min(s.MaxTest/4, 5*time.Second))
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				mu.Lock()
				overdue := !testSince.IsZero() && time.Since(testSince) > s.MaxTest
				mu.Unlock()
				if overdue {
					s.Log.Warn("a test outlasted the longest planned slot; restarting the iperf3 server", "max_test", s.MaxTest)
					_ = process.Kill()
					return
				}
			}
		}()
	}
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		line := scanner.Text()
		mu.Lock()
		switch {
		case strings.Contains(line, "Accepted connection from"):
			testSince = time.Now()
		case strings.Contains(line, "Server listening on"):
			testSince = time.Time{}
		}
		mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, stdout)
}

// Run keeps the server alive until ctx ends, then stops it.
func (s *Server) Run(ctx context.Context) {
	backoff := s.MinBackoff
	for ctx.Err() == nil {
		began := time.Now()
		cmd := childproc.Command(ctx, s.Binary, append(s.Args(), "--forceflush")...)
		cmd.WaitDelay = 5 * time.Second
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err == nil {
			s.Log.Info("iperf3 server started", "port", s.Port, "bind", s.Bind, "pid", cmd.Process.Pid,
				"authentication", s.Auth != nil, "max_test", s.MaxTest)
			if s.Started != nil {
				s.Started(cmd.Process.Pid)
			}
			s.watch(stdout, cmd.Process)
			err = cmd.Wait()
		}
		if ctx.Err() != nil {
			return
		}
		// A server that ran a while before dying gets restarted promptly.
		if time.Since(began) > time.Minute {
			backoff = s.MinBackoff
		}
		s.Log.Warn("iperf3 server exited; restarting", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, s.MaxBackoff)
	}
}
