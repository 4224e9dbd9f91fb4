// Package iperfwindow opens the iperf3 server a perfSONAR node's single-ended throughput test
// connects to. pScheduler's iperf3 client cannot present the per-slot credentials the agent's
// own server requires, so for each window its plan lists the agent runs a separate one-off
// server without authentication (`iperf3 -s -1`), from Lead before the node's run until the
// window's end, one window at a time, and never on a port of its own listeners.
package iperfwindow

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/childproc"
	"github.com/fathom-net/fathom/agents/internal/plan"
)

// DefaultLead is how long before a window's start its server opens: pScheduler starts its
// tool a few seconds into the run, and the node's clock may run a little ahead of ours.
const DefaultLead = 20 * time.Second

// maxRetryDelay bounds the wait before reopening a server that exited without a test.
const maxRetryDelay = 10 * time.Second

// Opener runs the windows of the newest plan. The zero value is not usable: call New.
type Opener struct {
	Binary string
	// Bind is the address the window's server listens on; empty means all.
	Bind string
	Lead time.Duration
	// Reserved are the ports of the agent's own listeners (its iperf3 server, its echo
	// responder): a window on one of them is refused rather than fight them for the port.
	Reserved []int
	Log      *slog.Logger
	// Now reads the wall clock: windows are the server's absolute times, like slots.
	Now func() time.Time
	// RetryDelay is the first wait before reopening a server that exited before a test came
	// (its port busy, a stray connection that was not iperf3); it doubles up to 10 s.
	RetryDelay time.Duration
	// Started is told the PID of every server started (tests).
	Started func(pid int)

	mu      sync.Mutex
	windows []plan.Iperf3Window // by start
	// served are the windows that are over: their test came or their end passed.
	served  map[string]bool
	changed chan struct{}
}

// New returns an opener with no windows yet.
func New(binary, bind string, reserved []int, log *slog.Logger) *Opener {
	return &Opener{
		Binary: binary, Bind: bind, Lead: DefaultLead, Reserved: reserved, Log: log, Now: time.Now,
		RetryDelay: time.Second, served: map[string]bool{}, changed: make(chan struct{}, 1),
	}
}

// Args is the command line of one window's server.
func (o *Opener) Args(w plan.Iperf3Window) []string {
	args := []string{"-s", "-1", "-p", strconv.Itoa(w.Port)}
	if o.Bind != "" {
		args = append(args, "-B", o.Bind)
	}
	// Lines as they happen, so the log tells when the node's test began.
	return append(args, "--forceflush")
}

// Apply replaces the schedule with a plan's windows (nil: none). An open window the new
// plan no longer lists is closed at once; one it lists with a new end closes then.
func (o *Opener) Apply(windows []plan.Iperf3Window) {
	accepted := make([]plan.Iperf3Window, 0, len(windows))
	listed := map[string]bool{}
	for _, w := range windows {
		if slices.Contains(o.Reserved, w.Port) {
			o.Log.Error("perfSONAR iperf3 window refused: its port is one of this agent's own listeners",
				"slot", w.SlotID, "peer", w.PeerName, "port", w.Port)
			continue
		}
		accepted = append(accepted, w)
		listed[w.SlotID] = true
	}
	slices.SortStableFunc(accepted, func(a, b plan.Iperf3Window) int { return a.StartAt.Compare(b.StartAt) })
	o.mu.Lock()
	o.windows = accepted
	for id := range o.served {
		if !listed[id] {
			delete(o.served, id)
		}
	}
	o.mu.Unlock()
	select {
	case o.changed <- struct{}{}:
	default: // a change is already pending; the loop reads the newest schedule anyway
	}
}

// next is the first window not yet over, by start.
func (o *Opener) next() (plan.Iperf3Window, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.Now()
	for _, w := range o.windows {
		if !o.served[w.SlotID] && now.Before(w.EndAt) {
			return w, true
		}
	}
	return plan.Iperf3Window{}, false
}

// lookup is the newest schedule's word on one window.
func (o *Opener) lookup(slotID string) (plan.Iperf3Window, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, w := range o.windows {
		if w.SlotID == slotID {
			return w, true
		}
	}
	return plan.Iperf3Window{}, false
}

func (o *Opener) markServed(slotID string) {
	o.mu.Lock()
	o.served[slotID] = true
	o.mu.Unlock()
}

// Run opens each window in its time until ctx ends, then closes any open one.
func (o *Opener) Run(ctx context.Context) {
	for ctx.Err() == nil {
		var due <-chan time.Time
		var timer *time.Timer
		if w, ok := o.next(); ok {
			wait := w.StartAt.Add(-o.Lead).Sub(o.Now())
			if wait <= 0 {
				o.serve(ctx, w)
				continue
			}
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-o.changed:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// serve keeps one window's server open until the node's test is over, the window's end
// passes, the plan drops the window, or ctx ends.
func (o *Opener) serve(ctx context.Context, w plan.Iperf3Window) {
	log := o.Log.With("slot", w.SlotID, "peer", w.PeerName, "peer_address", w.PeerAddress, "port", w.Port)
	end := time.NewTimer(w.EndAt.Sub(o.Now()))
	defer end.Stop()
	retry := o.RetryDelay
	var running *server
	var reopen <-chan time.Time
	open := func() {
		s, err := o.start(ctx, w, log)
		if err != nil {
			log.Error("perfSONAR iperf3 window's server did not start", "error", err, "retry_in", retry)
			reopen, retry = time.After(retry), min(retry*2, maxRetryDelay)
			return
		}
		running = s
		log.Info("perfSONAR iperf3 window open", "pid", s.pid, "start_at", w.StartAt, "end_at", w.EndAt)
	}
	shut := func(reason string) {
		if running != nil {
			running.cancel()
			<-running.done
			running = nil
		}
		log.Info("perfSONAR iperf3 window closed", "reason", reason)
	}
	open()
	for {
		var exited <-chan outcome
		if running != nil {
			exited = running.done
		}
		select {
		case <-ctx.Done():
			shut("the agent is stopping")
			return
		case <-end.C:
			shut("its end passed")
			o.markServed(w.SlotID)
			return
		case <-o.changed:
			current, listed := o.lookup(w.SlotID)
			if !listed || current.Port != w.Port {
				// A moved window reopens from Run with its new port or times.
				shut("the plan dropped or moved it")
				return
			}
			if !current.EndAt.Equal(w.EndAt) {
				w = current
				end.Reset(w.EndAt.Sub(o.Now()))
			}
		case out := <-exited:
			running = nil
			if out.tested {
				shut("the node's test is over")
				o.markServed(w.SlotID)
				return
			}
			log.Warn("perfSONAR iperf3 window's server exited before a test came; reopening it",
				"error", out.err, "output", out.last, "retry_in", retry)
			reopen, retry = time.After(retry), min(retry*2, maxRetryDelay)
		case <-reopen:
			reopen = nil
			open()
		}
	}
}

// server is one running `iperf3 -s -1`.
type server struct {
	pid    int
	cancel context.CancelFunc
	done   chan outcome // receives once the process has exited and its output is read
}

type outcome struct {
	tested bool   // a client's test was accepted
	last   string // the last line of output, for the log
	err    error
}

func (o *Opener) start(ctx context.Context, w plan.Iperf3Window, log *slog.Logger) (*server, error) {
	serverCtx, cancel := context.WithCancel(ctx)
	cmd := childproc.Command(serverCtx, o.Binary, o.Args(w)...)
	cmd.WaitDelay = 5 * time.Second
	output, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Stderr = cmd.Stdout // iperf3 writes its errors there
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	s := &server{pid: cmd.Process.Pid, cancel: cancel, done: make(chan outcome, 1)}
	if o.Started != nil {
		o.Started(s.pid)
	}
	go func() {
		var out outcome
		scanner := bufio.NewScanner(output)
		for scanner.Scan() {
			line := strings.TrimSpace(scanner.Text())
			if from, ok := acceptedFrom(line); ok {
				out.tested = true
				if expected, err := netip.ParseAddr(w.PeerAddress); err == nil && from.IsValid() && from != expected.Unmap() {
					log.Warn("a test from an address other than the perfSONAR node's came to its iperf3 window", "from", from)
				} else {
					log.Info("perfSONAR node's test connected", "from", from)
				}
			}
			if line != "" && !strings.HasPrefix(line, "---") {
				out.last = line
			}
		}
		_, _ = io.Copy(io.Discard, output)
		out.err = cmd.Wait()
		s.done <- out
	}()
	return s, nil
}

// acceptedFrom reads iperf3's "Accepted connection from 198.18.9.9, port 54802", printed
// once a client's test begins (a stray connection that is not iperf3 never gets there).
func acceptedFrom(line string) (netip.Addr, bool) {
	rest, found := strings.CutPrefix(line, "Accepted connection from ")
	if !found {
		return netip.Addr{}, false
	}
	host, _, _ := strings.Cut(rest, ",")
	addr, err := netip.ParseAddr(strings.TrimSpace(host))
	if err != nil {
		return netip.Addr{}, true // a test came all the same
	}
	return addr.Unmap(), true
}
