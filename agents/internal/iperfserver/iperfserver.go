// Package iperfserver keeps an iperf3 server running so peers can test throughput to this
// agent, restarting it with back-off whenever it exits.
package iperfserver

import (
	"context"
	"log/slog"
	"os/exec"
	"strconv"
	"time"
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
	Auth       *Auth
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

// Run keeps the server alive until ctx ends, then stops it.
func (s *Server) Run(ctx context.Context) {
	backoff := s.MinBackoff
	for ctx.Err() == nil {
		began := time.Now()
		cmd := exec.CommandContext(ctx, s.Binary, s.Args()...)
		cmd.Env = []string{"LC_ALL=C", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		cmd.WaitDelay = 5 * time.Second
		err := cmd.Start()
		if err == nil {
			s.Log.Info("iperf3 server started", "port", s.Port, "bind", s.Bind, "pid", cmd.Process.Pid,
				"authentication", s.Auth != nil)
			if s.Started != nil {
				s.Started(cmd.Process.Pid)
			}
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
