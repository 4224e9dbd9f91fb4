package twampcontrol

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
	"github.com/fathom-net/fathom/agents/internal/reflector"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// mesh is a real reflector admitting peers, and a control server beside it, on loopback.
type mesh struct {
	reflector *reflector.Service
	server    *Server
	tcp       string // the control server's address
	udpPort   int    // the reflector's
}

func startMesh(t *testing.T, peers ...string) *mesh {
	t.Helper()
	return startMeshWith(t, func(*Server) {}, peers...)
}

// startMeshWith lets configure change the server before it runs.
func startMeshWith(t *testing.T, configure func(*Server), peers ...string) *mesh {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var done []chan struct{}
	t.Cleanup(func() {
		cancel()
		for _, d := range done {
			<-d
		}
	})
	run := func(f func(context.Context)) {
		d := make(chan struct{})
		done = append(done, d)
		go func() { f(ctx); close(d) }()
	}
	wait := func(ready chan net.Addr) net.Addr {
		select {
		case a := <-ready:
			return a
		case <-time.After(10 * time.Second):
			t.Fatal("not listening")
			return nil
		}
	}
	m := &mesh{reflector: reflector.New(0, "127.0.0.1", 100, hostclock.For(true), quiet)}
	var planned []plan.TwampPeer
	for _, p := range peers {
		planned = append(planned, plan.TwampPeer{Address: p, Port: 862})
	}
	m.reflector.Admit(planned)
	udpReady := make(chan net.Addr, 1)
	m.reflector.Ready = func(a net.Addr) { udpReady <- a }
	run(m.reflector.Run)
	m.udpPort = wait(udpReady).(*net.UDPAddr).Port

	m.server = New(0, "127.0.0.1", m.udpPort, m.reflector.Admits, quiet)
	m.server.StepTimeout, m.server.MaxConns = 300*time.Millisecond, 4
	configure(m.server)
	tcpReady := make(chan net.Addr, 1)
	m.server.Ready = func(a net.Addr) { tcpReady <- a }
	run(m.server.Run)
	m.tcp = wait(tcpReady).String()
	return m
}

// client is a TWAMP-Control client for the tests.
type client struct {
	t    *testing.T
	conn net.Conn
}

func dial(t *testing.T, address string) *client {
	t.Helper()
	conn, err := net.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, conn: conn}
}

func (c *client) send(b []byte) {
	c.t.Helper()
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) receive(n int) []byte {
	c.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c.conn, b); err != nil {
		c.t.Fatalf("reading %d octets: %v", n, err)
	}
	return b
}

// closed reports whether the server closed the connection (EOF or reset, not a timeout).
func (c *client) closed() bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.conn.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// setUp reads the greeting, chooses mode and returns the Server-Start's Accept.
func (c *client) setUp(mode uint32) byte {
	c.t.Helper()
	g := c.receive(greetingSize)
	if modes := binary.BigEndian.Uint32(g[12:16]); modes != 1 {
		c.t.Fatalf("modes %d", modes)
	}
	if count := binary.BigEndian.Uint32(g[48:52]); count < 1024 {
		c.t.Fatalf("count %d", count)
	}
	response := make([]byte, setUpResponseSize)
	binary.BigEndian.PutUint32(response, mode)
	c.send(response)
	start := c.receive(serverStartSize)
	return start[15]
}

func v4(a string) []byte {
	raw := netip.MustParseAddr(a).As4()
	return cat(raw[:], zeros(12))
}

func TestAFullSessionIsAnsweredByTheReflector(t *testing.T) {
	m := startMesh(t, "127.0.0.1")
	c := dial(t, m.tcp)
	if accept := c.setUp(1); accept != 0 {
		t.Fatalf("server-start accept %d", accept)
	}
	c.send(requestBytes(4, v4("127.0.0.1"), v4("127.0.0.1"), zeros(4)))
	accepted := c.receive(acceptSessionSize)
	if accepted[0] != 0 {
		t.Fatalf("accept-session accept %d", accepted[0])
	}
	// It asked for 20001; the answer names the reflector's port.
	if port := binary.BigEndian.Uint16(accepted[2:4]); int(port) != m.udpPort {
		t.Fatalf("port %d, the reflector's is %d", port, m.udpPort)
	}
	if sid := accepted[4:20]; !bytes.Equal(sid[:4], []byte{127, 0, 0, 1}) || bytes.Equal(sid[12:], zeros(4)) {
		t.Fatalf("SID %x", sid)
	}
	c.send(cat([]byte{2}, zeros(31))) // Start-Sessions
	if ack := c.receive(startAckSize); ack[0] != 0 {
		t.Fatalf("start-ack accept %d", ack[0])
	}

	udp, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: m.udpPort})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	_ = udp.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range uint32(3) {
		out, _ := twamp.SenderPacket{Seq: i, Sent: twamp.TimestampOf(time.Now()), Error: twamp.UnknownClock}.Marshal(41)
		if _, err := udp.Write(out); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		n, err := udp.Read(buf)
		if err != nil {
			t.Fatalf("packet %d not answered: %v", i, err)
		}
		answer, err := twamp.ParseReflectorPacket(buf[:n])
		if err != nil || answer.SenderSeq != i {
			t.Fatalf("answer %+v %v", answer, err)
		}
	}

	c.send(cat([]byte{3, 0, 0, 0, 0, 0, 0, 1}, zeros(24))) // Stop-Sessions, 1 session
	c.conn.Close()
	// The server is still there for the next client.
	if accept := dial(t, m.tcp).setUp(1); accept != 0 {
		t.Fatalf("second client: accept %d", accept)
	}
}

func TestAnUnplannedAddressIsRefused(t *testing.T) {
	m := startMesh(t, "192.0.2.1")
	c := dial(t, m.tcp)
	if accept := c.setUp(1); accept != acceptFailure {
		t.Fatalf("server-start accept %d, want %d", accept, acceptFailure)
	}
	if !c.closed() {
		t.Fatal("connection left open")
	}
}

func TestASessionForAnUnplannedSenderIsRefused(t *testing.T) {
	m := startMesh(t, "127.0.0.1")
	c := dial(t, m.tcp)
	if accept := c.setUp(1); accept != 0 {
		t.Fatalf("server-start accept %d", accept)
	}
	c.send(requestBytes(4, v4("198.51.100.7"), zeros(16), zeros(4)))
	if accepted := c.receive(acceptSessionSize); accepted[0] != acceptFailure {
		t.Fatalf("accept-session accept %d", accepted[0])
	}
	c.send(requestBytes(4, zeros(16), zeros(16), []byte{0x04, 0, 0, 0})) // a DSCP the reflector won't use
	if accepted := c.receive(acceptSessionSize); accepted[0] != acceptUnsupported {
		t.Fatalf("DSCP: accept-session accept %d", accepted[0])
	}
	c.send(requestBytes(4, zeros(16), zeros(16), zeros(4))) // zero: the control connection's address
	if accepted := c.receive(acceptSessionSize); accepted[0] != acceptOK {
		t.Fatalf("accept-session accept %d", accepted[0])
	}
}

func TestOtherModesAreNotSupported(t *testing.T) {
	m := startMesh(t, "127.0.0.1")
	c := dial(t, m.tcp)
	if accept := c.setUp(2); accept != acceptUnsupported {
		t.Fatalf("authenticated mode: accept %d", accept)
	}
	if !c.closed() {
		t.Fatal("connection left open")
	}
}

func TestBadClientsAreDroppedAndOthersServed(t *testing.T) {
	m := startMesh(t, "127.0.0.1")
	cases := map[string]func(c *client){
		"stalls before set-up": func(c *client) { c.receive(greetingSize) },
		"short set-up then stall": func(c *client) {
			c.receive(greetingSize)
			c.send([]byte{0, 0, 0, 1})
		},
		"short set-up then close": func(c *client) {
			c.receive(greetingSize)
			c.send([]byte{0, 0})
			_ = c.conn.(*net.TCPConn).CloseWrite()
		},
		"unknown command": func(c *client) {
			c.setUp(1)
			c.send(cat([]byte{4}, zeros(31))) // Fetch-Session: OWAMP's, not TWAMP's
		},
		"bad IPVN": func(c *client) {
			c.setUp(1)
			c.send(requestBytes(9, zeros(16), zeros(16), zeros(4)))
			if a := c.receive(acceptSessionSize); a[0] != acceptUnsupported {
				c.t.Fatalf("accept %d", a[0])
			}
			c.send(cat([]byte{2}, zeros(31)))
			c.receive(startAckSize) // no sessions: the wait stays short
		},
		"stalls mid-request": func(c *client) {
			c.setUp(1)
			c.send(requestBytes(4, zeros(16), zeros(16), zeros(4))[:40])
		},
	}
	for name, misbehave := range cases {
		t.Run(name, func(t *testing.T) {
			c := dial(t, m.tcp)
			misbehave(c)
			if !c.closed() {
				t.Fatal("connection left open")
			}
			if accept := dial(t, m.tcp).setUp(1); accept != 0 {
				t.Fatalf("next client: accept %d", accept)
			}
		})
	}
}

func TestConnectionsBeyondTheCapAreClosed(t *testing.T) {
	// Long enough that the connections below hold their slots while they stall.
	m := startMeshWith(t, func(s *Server) { s.StepTimeout = time.Minute }, "127.0.0.1")
	var held []*client
	for range m.server.MaxConns {
		c := dial(t, m.tcp)
		c.receive(greetingSize)
		held = append(held, c)
	}
	if extra := dial(t, m.tcp); !extra.closed() {
		t.Fatal("a connection beyond the cap was served")
	}
	for _, c := range held {
		c.conn.Close()
	}
	eventually(t, func() bool {
		c := dial(t, m.tcp)
		defer c.conn.Close()
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Second))
		_, err := io.ReadFull(c.conn, make([]byte, greetingSize))
		return err == nil
	})
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("never")
		}
	}
}
