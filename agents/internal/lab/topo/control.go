package topo

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/lab/emu"
)

// Request is one line on the control socket.
type Request struct {
	Op     string            `json:"op"` // "set" or "stats"
	Link   string            `json:"link,omitempty"`
	Values map[string]string `json:"values,omitempty"`
}

// Reply answers a Request.
type Reply struct {
	Error string      `json:"error,omitempty"`
	Stats []LinkStats `json:"stats,omitempty"`
}

// LinkStats are one direction's counters.
type LinkStats struct {
	Link      string       `json:"link"`
	Direction string       `json:"direction"`
	Counters  emu.Counters `json:"counters"`
}

// Serve answers control requests on the lab's socket until the listener is closed.
func (lab *Lab) Serve(listener net.Listener) {
	for {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			var req Request
			reply := Reply{}
			if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req); err != nil {
				reply.Error = "malformed request: " + err.Error()
			} else {
				reply = lab.handle(req)
			}
			_ = json.NewEncoder(conn).Encode(reply)
		}()
	}
}

func (lab *Lab) handle(req Request) Reply {
	switch req.Op {
	case "set":
		if err := lab.Set(req.Link, req.Values); err != nil {
			return Reply{Error: err.Error()}
		}
		return Reply{}
	case "stats":
		names := make([]string, 0, len(lab.Directions))
		for name := range lab.Directions {
			names = append(names, name)
		}
		sort.Strings(names)
		var stats []LinkStats
		for _, name := range names {
			dirs := lab.Directions[name]
			stats = append(stats,
				LinkStats{Link: name, Direction: "a_to_b", Counters: dirs[0].Counters()},
				LinkStats{Link: name, Direction: "b_to_a", Counters: dirs[1].Counters()})
		}
		return Reply{Stats: stats}
	default:
		return Reply{Error: fmt.Sprintf("unknown op %q (set or stats)", req.Op)}
	}
}

// SetKeys are what `fathom-lab set` may change while the lab runs.
var SetKeys = []string{"delay_ms", "jitter_ms", "loss", "rate_mbps", "queue_bytes", "policer_rate_mbps", "policer_burst_bytes"}

// Set changes a link's parameters: "delay_ms=20" changes both directions, "a_to_b.loss=0.01"
// one. Every value is checked before any is applied, so a bad request changes nothing.
func (lab *Lab) Set(link string, values map[string]string) error {
	dirs, ok := lab.Directions[link]
	if !ok {
		return fmt.Errorf("no link named %q", link)
	}
	if len(values) == 0 {
		return errors.New("nothing to set")
	}
	next := [2]emu.Params{dirs[0].Params(), dirs[1].Params()}
	for key, raw := range values {
		sides := []int{0, 1}
		name := key
		if prefix, rest, found := strings.Cut(key, "."); found {
			switch prefix {
			case "a_to_b":
				sides = []int{0}
			case "b_to_a":
				sides = []int{1}
			default:
				return fmt.Errorf("%s: direction must be a_to_b or b_to_a", key)
			}
			name = rest
		}
		value, err := strconv.ParseFloat(raw, 64)
		if err != nil || value < 0 {
			return fmt.Errorf("%s=%q: not a non-negative number", key, raw)
		}
		for _, side := range sides {
			if err := apply(&next[side], name, value); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	dirs[0].Set(next[0])
	dirs[1].Set(next[1])
	return nil
}

func apply(p *emu.Params, name string, value float64) error {
	ms := time.Duration(value * float64(time.Millisecond))
	switch name {
	case "delay_ms":
		if len(p.Members) > 0 {
			return errors.New("this direction has ECMP members; their delays are fixed by the scenario")
		}
		p.Delay = ms
	case "jitter_ms":
		p.Jitter = ms
	case "loss":
		if value > 1 {
			return fmt.Errorf("%v is not a probability", value)
		}
		p.Loss = value
	case "rate_mbps":
		p.RateBps = value * 1e6
		if p.QueueBytes == 0 {
			p.QueueBytes = DefaultQueueBytes
		}
	case "queue_bytes":
		p.QueueBytes = int(value)
	case "policer_rate_mbps":
		p.PolicerBps = value * 1e6
	case "policer_burst_bytes":
		p.PolicerBurst = int(value)
	default:
		return fmt.Errorf("unknown key %q (one of %s)", name, strings.Join(SetKeys, ", "))
	}
	return nil
}

// Call sends one request to the lab running in dir.
func Call(dir string, req Request) (Reply, error) {
	conn, err := net.DialTimeout("unix", ControlSocket(dir), 5*time.Second)
	if err != nil {
		return Reply{}, fmt.Errorf("no lab answers in %s: %w", dir, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Reply{}, err
	}
	var reply Reply
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		return Reply{}, fmt.Errorf("unreadable reply: %w", err)
	}
	if reply.Error != "" {
		return reply, errors.New(reply.Error)
	}
	return reply, nil
}

// Listen opens the control socket (root only: 0600).
func Listen(dir string) (net.Listener, error) {
	_ = os.Remove(ControlSocket(dir))
	listener, err := net.Listen("unix", ControlSocket(dir))
	if err != nil {
		return nil, err
	}
	return listener, os.Chmod(ControlSocket(dir), 0o600)
}
