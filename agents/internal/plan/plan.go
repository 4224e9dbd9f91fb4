// Package plan holds the agent's plan: the tests the server wants it to run. It fetches the
// plan with an ETag, caches it on disk, and refuses to run a plan past its valid_until, so an
// agent cut off from the server never measures forever on stale instructions.
package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Peer is the agent at the other end of a test.
type Peer struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Address string `json:"address"`
}

// Test is one entry of the plan.
type Test struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	IntervalS int             `json:"interval_s"`
	Peer      Peer            `json:"peer"`
	Spec      json.RawMessage `json:"spec"`
	// Iperf3Auth is the slot's credential for the peer's iperf3 server (slots only).
	Iperf3Auth *Iperf3Auth `json:"-"`
}

// Iperf3Auth is what a slot's client presents to the peer's iperf3 server.
type Iperf3Auth struct {
	Username  string `json:"username"`
	Password  string `json:"password"`
	PublicKey string `json:"public_key"`
}

// Iperf3User is one client this agent's iperf3 server admits: a line of its
// authorized-users file.
type Iperf3User struct {
	Username       string `json:"username"`
	PasswordSHA256 string `json:"password_sha256"`
}

// Iperf3Window is a time in which a perfSONAR node's iperf3 client tests against this agent
// (pScheduler's single-ended throughput). The node cannot present Iperf3Users credentials, so
// the agent opens a separate one-off server without authentication, only for the window.
type Iperf3Window struct {
	SlotID      string    `json:"slot_id"`
	StartAt     time.Time `json:"start_at"`
	EndAt       time.Time `json:"end_at"`
	Port        int       `json:"port"`
	PeerName    string    `json:"peer_name"`
	PeerAddress string    `json:"peer_address"`
}

// LoadedWindow is the reserved time of one exclusive slot and the agents its test loads (the
// slot's source and destination): a background run between either of them and another agent
// would measure that test's queue, so the scheduler moves it out of the window.
type LoadedWindow struct {
	StartAt  time.Time `json:"start_at"`
	EndAt    time.Time `json:"end_at"`
	AgentIDs []string  `json:"agent_ids"`
}

// Loads reports whether the window loads the agent with this id.
func (w LoadedWindow) Loads(agentID string) bool {
	for _, id := range w.AgentIDs {
		if id == agentID && id != "" {
			return true
		}
	}
	return false
}

// TwampPeer is a sender this agent's TWAMP-light reflector answers: an agent (or perfSONAR
// node) whose latency test measures against it. Port is where that test sends.
type TwampPeer struct {
	Address string `json:"address"`
	Port    int    `json:"port"`
}

// Slot is one exclusive run (throughput) the server planned for this agent at a fixed time,
// so that no agent ever takes part in two at once.
type Slot struct {
	ID      string          `json:"id"`
	TestID  string          `json:"test_id"`
	Type    string          `json:"type"`
	StartAt time.Time       `json:"start_at"`
	Peer    Peer            `json:"peer"`
	Spec    json.RawMessage `json:"spec"`
	// Iperf3Auth is nil when the peer's server runs without authentication.
	Iperf3Auth *Iperf3Auth `json:"iperf3_auth"`
}

// Test is the slot as a one-off test for a prober.
func (s Slot) Test() Test {
	return Test{ID: s.TestID, Type: s.Type, IntervalS: 1, Peer: s.Peer, Spec: s.Spec, Iperf3Auth: s.Iperf3Auth}
}

// Plan is what GET /api/v1/agent/plan/ returns.
type Plan struct {
	SchemaVersion      int       `json:"schema_version"`
	AgentID            string    `json:"agent_id"`
	Version            string    `json:"version"`
	GeneratedAt        time.Time `json:"generated_at"`
	ValidUntil         time.Time `json:"valid_until"`
	UploadIntervalS    int       `json:"upload_interval_s"`
	HostFactsIntervalS int       `json:"host_facts_interval_s"`
	Tests              []Test    `json:"tests"`
	Slots              []Slot    `json:"slots"`
	// Iperf3Users are the clients this agent's iperf3 server admits now.
	Iperf3Users []Iperf3User `json:"iperf3_users"`
	// Iperf3Windows are the perfSONAR nodes' runs against this agent.
	Iperf3Windows []Iperf3Window `json:"iperf3_windows"`
	// LoadedWindows are the exclusive tests on this agent or its peers (absent from older servers).
	LoadedWindows []LoadedWindow `json:"loaded_windows"`
	// TwampPeers are who may send to this agent's reflector (absent from older servers).
	TwampPeers []TwampPeer `json:"twamp_peers"`
}

// ErrExpired is returned for a plan past its valid_until.
var ErrExpired = errors.New("plan expired")

// Decode parses and checks a plan.
func Decode(data []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("plan is not valid JSON: %w", err)
	}
	if p.SchemaVersion != 1 {
		return nil, fmt.Errorf("plan schema_version %d is not supported (want 1)", p.SchemaVersion)
	}
	if p.Version == "" || p.ValidUntil.IsZero() {
		return nil, errors.New("plan lacks version or valid_until")
	}
	for i, t := range p.Tests {
		if t.ID == "" || t.Type == "" || t.IntervalS < 1 {
			return nil, fmt.Errorf("plan test %d: id, type and a positive interval_s are required", i)
		}
	}
	for i, s := range p.Slots {
		if s.ID == "" || s.Type == "" || s.StartAt.IsZero() {
			return nil, fmt.Errorf("plan slot %d: id, type and start_at are required", i)
		}
		if a := s.Iperf3Auth; a != nil && (!validUsername(a.Username) || a.Password == "" || a.PublicKey == "") {
			return nil, fmt.Errorf("plan slot %d: iperf3_auth needs a username of [A-Za-z0-9_-], a password and a public key", i)
		}
	}
	for i, u := range p.Iperf3Users {
		// They become lines "username,hash" of a file iperf3 reads: nothing else may slip in.
		if !validUsername(u.Username) || !sha256Hex.MatchString(u.PasswordSHA256) {
			return nil, fmt.Errorf("plan iperf3 user %d: a username of [A-Za-z0-9_-] and a sha256 hex digest are required", i)
		}
	}
	for i, w := range p.Iperf3Windows {
		if w.SlotID == "" || w.StartAt.IsZero() || !w.EndAt.After(w.StartAt) {
			return nil, fmt.Errorf("plan iperf3 window %d: slot_id, start_at and a later end_at are required", i)
		}
		if w.Port < 1 || w.Port > 65535 {
			return nil, fmt.Errorf("plan iperf3 window %d: port %d out of range 1..65535", i, w.Port)
		}
	}
	for i, w := range p.LoadedWindows {
		if w.StartAt.IsZero() || !w.EndAt.After(w.StartAt) || len(w.AgentIDs) < 1 || len(w.AgentIDs) > 2 {
			return nil, fmt.Errorf("plan loaded window %d: start_at, a later end_at and one or two agent_ids are required", i)
		}
	}
	for i, peer := range p.TwampPeers {
		if peer.Address == "" || peer.Port < 1 || peer.Port > 65535 {
			return nil, fmt.Errorf("plan twamp peer %d: an address and a port of 1..65535 are required", i)
		}
	}
	return &p, nil
}

var (
	usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	sha256Hex       = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func validUsername(name string) bool { return usernamePattern.MatchString(name) }

// Usable reports whether the plan may still be run at now.
func (p *Plan) Usable(now time.Time) error {
	if now.After(p.ValidUntil) {
		return fmt.Errorf("%w: valid until %s", ErrExpired, p.ValidUntil.Format(time.RFC3339))
	}
	return nil
}

// Cache keeps the last plan on disk so a restart without the server resumes measuring.
type Cache struct{ Path string }

// Load returns the cached plan, or nil when there is none.
func (c Cache) Load() (*Plan, error) {
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// Store writes the plan atomically.
func (c Cache) Store(p *Plan) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Path), ".plan-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.Path)
}
