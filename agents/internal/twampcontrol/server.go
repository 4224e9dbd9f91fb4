// Package twampcontrol answers TWAMP-Control (RFC 5357 §3, the message layouts of RFC 4656
// §3) in unauthenticated mode, so that full-TWAMP clients, perfSONAR's twping above all, can
// measure against the agent: they need a control session over TCP before their test packets,
// which the agent's TWAMP-light reflector (package reflector) then answers. The server admits
// the reflector's planned peers only; it keeps no test state of its own, since the reflector
// answers a planned peer's packets with or without a session.
package twampcontrol

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/restart"
)

// Server is the TWAMP-Control server. Set its fields before Run.
type Server struct {
	// Port and Bind are where it listens on TCP: the reflector's port number, as 862 is
	// both TWAMP-Control's (TCP) and TWAMP-Test's (UDP, RFC 8545).
	Port int
	Bind string
	// TestPort is the reflector's UDP port, where every accepted session's packets go.
	TestPort int
	// Admits is the reflector's admission rule: only its planned peers may set sessions up.
	Admits func(netip.Addr) bool
	Log    *slog.Logger
	// MaxConns bounds the control connections at once; more are closed at once.
	MaxConns int
	// StepTimeout bounds each wait for a client's next message while it sets sessions up;
	// a client that stalls is dropped.
	StepTimeout time.Duration
	// ServWait bounds the wait for Stop-Sessions once sessions run (RFC 5357 §3.1's
	// SERVWAIT, 900 s by default).
	ServWait time.Duration
	// MinBackoff and MaxBackoff space the attempts to listen again.
	MinBackoff, MaxBackoff time.Duration
	// Ready is told the address each time the server starts listening (tests).
	Ready func(net.Addr)
	// Now is the clock of the timestamps (tests); time.Now when nil.
	Now func() time.Time

	started time.Time
}

// New returns a server with the agent's limits and back-off.
func New(port int, bind string, testPort int, admits func(netip.Addr) bool, log *slog.Logger) *Server {
	return &Server{Port: port, Bind: bind, TestPort: testPort, Admits: admits, Log: log,
		MaxConns: 32, StepTimeout: 30 * time.Second, ServWait: 900 * time.Second,
		MinBackoff: time.Second, MaxBackoff: time.Minute}
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Run serves until ctx ends, listening again with back-off while the port cannot be had.
func (s *Server) Run(ctx context.Context) {
	s.started = s.now()
	restart.Loop(ctx, s.MinBackoff, s.MaxBackoff, s.serve, func(err error, retryIn time.Duration) {
		s.Log.Error("twamp control not answering; perfSONAR nodes' twping tests to this host fail until it does",
			"port", s.Port, "bind", s.Bind, "error", err, "retry_in", retryIn)
	})
}

func (s *Server) serve(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(s.Bind, strconv.Itoa(s.Port)))
	if errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("%w (ports below 1024 need CAP_NET_BIND_SERVICE, which the fathom-agent unit grants)", err)
	}
	if err != nil {
		return err
	}
	s.Log.Info("twamp control listening", "tcp", ln.Addr().String())
	if s.Ready != nil {
		s.Ready(ln.Addr())
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, max(s.MaxConns, 1))
	for {
		conn, err := ln.Accept()
		if err != nil {
			ln.Close()
			if ctx.Err() != nil {
				return nil
			}
			var temporary interface{ Timeout() bool }
			if errors.As(err, &temporary) && temporary.Timeout() {
				continue
			}
			return err
		}
		select {
		case slots <- struct{}{}:
		default:
			s.Log.Warn("twamp control: too many control connections; closing one", "peer", conn.RemoteAddr().String(),
				"max", cap(slots))
			conn.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			closeOnEnd := context.AfterFunc(ctx, func() { conn.Close() })
			defer closeOnEnd()
			defer conn.Close()
			if err := s.control(conn); err != nil && ctx.Err() == nil {
				s.Log.Warn("twamp control connection closed", "peer", conn.RemoteAddr().String(), "error", err)
			}
		}()
	}
}

// errRefused ends the connection of a peer the plan does not name, after telling it so.
var errRefused = errors.New("not a planned peer: refused")

// control runs one control connection until the client closes it or breaks the protocol.
func (s *Server) control(conn net.Conn) error {
	remote, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
	local, _ := netip.ParseAddrPort(conn.LocalAddr().String())
	peer := remote.Addr().Unmap().WithZone("")

	var challenge, salt, iv [16]byte
	_, _ = rand.Read(challenge[:])
	_, _ = rand.Read(salt[:])
	_, _ = rand.Read(iv[:])
	if err := s.send(conn, greeting(challenge, salt)); err != nil {
		return err
	}
	setUp := make([]byte, setUpResponseSize)
	if err := s.read(conn, setUp, s.StepTimeout); err != nil {
		return fmt.Errorf("set-up-response: %w", err)
	}
	switch mode := chosenMode(setUp); {
	case mode == 0: // RFC 4656 §3.1: the client does not wish to go on
		return nil
	case mode != modeUnauthenticated:
		_ = s.send(conn, serverStart(acceptUnsupported, iv, twamp.TimestampOf(s.started)))
		return fmt.Errorf("mode %d asked; only unauthenticated (1) is offered", mode)
	case !s.admits(peer):
		_ = s.send(conn, serverStart(acceptFailure, iv, twamp.TimestampOf(s.started)))
		return errRefused
	}
	if err := s.send(conn, serverStart(acceptOK, iv, twamp.TimestampOf(s.started))); err != nil {
		return err
	}

	sessions := 0
	running := false
	buf := make([]byte, requestSessionSize)
	for {
		wait := s.StepTimeout
		if running {
			wait = s.ServWait
		}
		if err := s.read(conn, buf[:commandSize], wait); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the client is done; its sessions end with the connection
			}
			return fmt.Errorf("command: %w", err)
		}
		switch buf[0] {
		case commandRequestTWSession:
			if running {
				return errors.New("a Request-TW-Session while sessions run")
			}
			if err := s.read(conn, buf[commandSize:], s.StepTimeout); err != nil {
				return fmt.Errorf("request-tw-session: %w", err)
			}
			accept, port, sid := s.decide(buf, peer, local.Addr())
			if err := s.send(conn, acceptSession(accept, port, sid)); err != nil {
				return err
			}
			if accept == acceptOK {
				sessions++
			}
		case commandStartSessions:
			if running {
				return errors.New("a Start-Sessions while sessions run")
			}
			if err := s.send(conn, startAck(acceptOK)); err != nil {
				return err
			}
			running = sessions > 0
		case commandStopSessions:
			if accept, n := stopSessions(buf[:commandSize]); accept != acceptOK || int(n) != sessions {
				s.Log.Info("twamp control: Stop-Sessions disagrees with the sessions accepted; stopping them all",
					"peer", peer, "accept", accept, "sessions", n, "accepted", sessions)
			}
			sessions, running = 0, false
		default:
			return fmt.Errorf("command %d is not one of TWAMP's 2, 3 and 5 (this server has no Fetch-Session)", buf[0])
		}
	}
}

// decide answers a Request-TW-Session: the accept value, the port and the SID.
func (s *Server) decide(b []byte, peer, local netip.Addr) (accept byte, port uint16, sid [16]byte) {
	req, err := parseRequest(b)
	switch {
	case err != nil:
		s.Log.Warn("twamp control: session refused", "peer", peer, "error", err)
		return acceptUnsupported, 0, sid
	case !s.admits(peer) || (req.Sender.IsValid() && !s.admits(req.Sender)):
		s.Log.Warn("twamp control: session refused: its sender is not a planned peer", "peer", peer,
			"sender", req.Sender)
		return acceptFailure, 0, sid
	case req.TypeP != 0:
		// The reflector answers with its socket's DSCP whatever was asked: accepting another
		// would let the client believe its Type-P was measured.
		s.Log.Warn("twamp control: session refused: the reflector cannot answer with the DSCP asked",
			"peer", peer, "type_p", req.TypeP)
		return acceptUnsupported, 0, sid
	}
	var random [4]byte
	_, _ = rand.Read(random[:])
	// RFC 5357 §3.5 lets the Server answer with another port than the Receiver Port asked:
	// the Accept-Session's Port is where the client sends. It is always the reflector's.
	return acceptOK, uint16(s.TestPort), sessionID(local, twamp.TimestampOf(s.now()), random)
}

func (s *Server) admits(addr netip.Addr) bool {
	return s.Admits != nil && s.Admits(addr.Unmap().WithZone(""))
}

// read fills b within timeout.
func (s *Server) read(conn net.Conn, b []byte, timeout time.Duration) error {
	if err := conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err := io.ReadFull(conn, b)
	return err
}

// send writes one message in one write: some clients (twampy) read one message a recv.
func (s *Server) send(conn net.Conn, b []byte) error {
	if err := conn.SetWriteDeadline(time.Now().Add(s.StepTimeout)); err != nil {
		return err
	}
	_, err := conn.Write(b)
	return err
}
