// Package ping runs iputils ping against a peer and turns its output into per-packet samples.
package ping

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/childproc"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/probe"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// TestType is the plan's name for this probe.
const TestType = "ping"

// Spec is a ping test's options, as the plan sends them.
type Spec struct {
	Count     int     `json:"count"`
	IntervalS float64 `json:"interval_s"`
	SizeBytes int     `json:"size_bytes"`
	TTL       *int    `json:"ttl"`
}

// DefaultSpec follows perfSONAR's regular ping test: 10 packets, one a second.
func DefaultSpec() Spec { return Spec{Count: 10, IntervalS: 1, SizeBytes: 56} }

// DecodeSpec reads a plan's spec over the defaults, refusing unknown fields, and validates it.
func DecodeSpec(raw json.RawMessage) (Spec, error) {
	spec := DefaultSpec()
	if err := probe.DecodeSpec(raw, &spec); err != nil {
		return spec, err
	}
	return spec, spec.Validate()
}

// Validate refuses options ping would reject or that would make a run unbounded.
func (s Spec) Validate() error {
	switch {
	case s.Count < 1 || s.Count > 10000:
		return fmt.Errorf("count %d out of range 1..10000", s.Count)
	case math.IsNaN(s.IntervalS) || s.IntervalS < 0.2 || s.IntervalS > 60:
		// 0.2 s is the shortest interval iputils allows without privileges.
		return fmt.Errorf("interval_s %g out of range 0.2..60", s.IntervalS)
	case s.SizeBytes < 0 || s.SizeBytes > 65507:
		return fmt.Errorf("size_bytes %d out of range 0..65507", s.SizeBytes)
	case s.TTL != nil && (*s.TTL < 1 || *s.TTL > 255):
		return fmt.Errorf("ttl %d out of range 1..255", *s.TTL)
	}
	return nil
}

// Prober runs ping. Binary and Now are fields so tests can replace them.
type Prober struct {
	Binary string
	Now    func() time.Time
	// ReplyWait is ping -W: how long to wait for the last reply. Long paths (a 560 ms
	// satellite hop) need more than ping's default.
	ReplyWait time.Duration
}

// New returns a prober using the ping on PATH.
func New() *Prober { return &Prober{Binary: "ping", Now: time.Now, ReplyWait: 3 * time.Second} }

// Args builds ping's command line.
func Args(spec Spec, target string, replyWait time.Duration) []string {
	args := []string{
		"-D", "-n",
		"-c", strconv.Itoa(spec.Count),
		"-i", strconv.FormatFloat(spec.IntervalS, 'f', -1, 64),
		"-s", strconv.Itoa(spec.SizeBytes),
		"-W", strconv.Itoa(int(math.Ceil(replyWait.Seconds()))),
	}
	if spec.TTL != nil {
		args = append(args, "-t", strconv.Itoa(*spec.TTL))
	}
	host, family := probe.Target(target)
	args = append(args, probe.FamilyFlag(family)...)
	return append(args, "--", host)
}

// Lasts is how long pinging takes: the packets' spacing, then the wait for the last reply.
func (p *Prober) Lasts(test plan.Test) time.Duration {
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		return 0
	}
	return time.Duration(float64(spec.Count-1)*spec.IntervalS*float64(time.Second)) + p.ReplyWait
}

// Run pings the test's peer and returns the result.
func (p *Prober) Run(ctx context.Context, test plan.Test, planVersion string) result.Result {
	started := p.Now()
	res := result.New(TestType, test.ID, planVersion, test.Peer.Address, test.Peer.ID, started)
	spec, err := DecodeSpec(test.Spec)
	if err != nil {
		res.Fail("invalid ping spec: " + err.Error())
		return res
	}
	interval := time.Duration(spec.IntervalS * float64(time.Second))
	deadline := time.Duration(spec.Count)*interval + p.ReplyWait + 10*time.Second
	runCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	cmd := childproc.Command(runCtx, p.Binary, Args(spec, test.Peer.Address, p.ReplyWait)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	res.EndedAt = p.Now().UTC()
	parsed := Parse(append(stdout.Bytes(), stderr.Bytes()...), Run{Start: started, Interval: interval, Count: spec.Count})
	// ping exits 1 when packets were lost: with a summary, loss is data, not a failure.
	if !parsed.Summary {
		res.Fail(failureReason(runErr, parsed, stderr.String(), runCtx.Err()))
		return res
	}
	res.Ping = &result.Ping{
		Count:       spec.Count,
		IntervalS:   spec.IntervalS,
		SizeBytes:   spec.SizeBytes,
		TTL:         spec.TTL,
		Transmitted: parsed.Transmitted,
		Received:    parsed.Received,
		Duplicates:  parsed.Duplicates,
		Errors:      parsed.Errors,
		Samples:     parsed.Samples,
	}
	return res
}

func failureReason(runErr error, parsed Parsed, stderr string, ctxErr error) string {
	var execErr *exec.Error
	switch {
	case errors.As(runErr, &execErr):
		return "ping cannot run: " + execErr.Error()
	case errors.Is(runErr, fs.ErrNotExist) || errors.Is(runErr, fs.ErrPermission):
		return "ping cannot run: " + runErr.Error()
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return "ping did not finish in time"
	case errors.Is(ctxErr, context.Canceled):
		return "ping cancelled (agent stopping)"
	case parsed.Fatal != "":
		return "ping: " + parsed.Fatal
	case strings.TrimSpace(stderr) != "":
		return strings.TrimSpace(stderr)
	case runErr != nil:
		return "ping failed: " + runErr.Error()
	}
	return "ping printed no statistics"
}
