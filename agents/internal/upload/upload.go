// Package upload sends spooled results to the server in batches and deletes them only once
// the server has acknowledged them. Results the server refuses as malformed or too large are
// quarantined one by one (a refused batch is split until they stand alone), never retried
// forever; network and server errors back off and keep everything.
package upload

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/fathom-net/fathom/agents/internal/api"
	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/result"
	"github.com/fathom-net/fathom/agents/internal/spool"
)

// Poster is the part of the API client the uploader needs.
type Poster interface {
	PostResults(ctx context.Context, batch result.Batch) ([]api.ItemStatus, error)
}

// Uploader drains the spool.
type Uploader struct {
	Spool     *spool.Spool
	Client    Poster
	BatchSize int
	// MaxBatchBytes keeps uploads small: a batch ends before the result that would take it
	// past this size, though a larger single result still goes alone (the server takes
	// any valid result by itself).
	MaxBatchBytes int
	Log           *slog.Logger
	// Interval between upload rounds when nothing kicks the uploader.
	Interval   func() time.Duration
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// Clock times the rounds and back-offs (Real unless a test build speeds it up).
	Clock clock.Clock
	kick  chan struct{}
}

// New returns an uploader with the default back-off (2 s doubling to 5 min).
func New(s *spool.Spool, client Poster, batchSize int, log *slog.Logger, interval func() time.Duration) *Uploader {
	return &Uploader{
		Spool: s, Client: client, BatchSize: batchSize, MaxBatchBytes: DefaultMaxBatchBytes, Log: log, Interval: interval,
		MinBackoff: 2 * time.Second, MaxBackoff: 5 * time.Minute, kick: make(chan struct{}, 1),
	}
}

// DefaultMaxBatchBytes is the batch size agents aim at; the server's limit is 32 MiB.
const DefaultMaxBatchBytes = 4 << 20

// Kick asks for an upload round soon (a new result was spooled).
func (u *Uploader) Kick() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// ErrRejected means the server refused results as malformed; they were quarantined.
var ErrRejected = errors.New("results rejected by the server and quarantined in spool/rejected")

// Once sends one batch; it returns how many results the server acknowledged.
func (u *Uploader) Once(ctx context.Context) (int, error) {
	entries, err := u.Spool.Pending(u.BatchSize)
	if err != nil || len(entries) == 0 {
		return 0, err
	}
	entries = withinBytes(entries, u.MaxBatchBytes)
	acked, rejected, err := u.send(ctx, entries)
	if err == nil && rejected > 0 {
		err = ErrRejected
	}
	return acked, err
}

// withinBytes is the longest prefix of entries within limit bytes, and at least one entry.
func withinBytes(entries []spool.Entry, limit int) []spool.Entry {
	if limit <= 0 {
		return entries
	}
	total := 0
	for i, e := range entries {
		total += e.Size
		if total > limit && i > 0 {
			return entries[:i]
		}
	}
	return entries
}

// send posts entries; a batch the server refuses as malformed (400) or too large (413) is
// split in halves until the refused results stand alone, so one bad result is quarantined
// by itself and the good ones beside it are delivered.
func (u *Uploader) send(ctx context.Context, entries []spool.Entry) (acked, rejected int, err error) {
	batch := result.Batch{SchemaVersion: result.SchemaVersion, Results: make([]result.Result, 0, len(entries))}
	sent := make(map[string]bool, len(entries))
	for _, e := range entries {
		batch.Results = append(batch.Results, e.Result)
		sent[e.ID] = true
	}
	statuses, err := u.Client.PostResults(ctx, batch)
	if api.IsStatus(err, http.StatusBadRequest) || api.IsStatus(err, http.StatusRequestEntityTooLarge) {
		if len(entries) > 1 {
			half := len(entries) / 2
			a1, r1, err1 := u.send(ctx, entries[:half])
			if err1 != nil {
				return a1, r1, err1
			}
			a2, r2, err2 := u.send(ctx, entries[half:])
			return a1 + a2, r1 + r2, err2
		}
		u.Log.Error("server refused a result; quarantined for inspection", "result", entries[0].ID, "error", err)
		return 0, 1, u.Spool.Reject([]string{entries[0].ID})
	}
	if err != nil {
		return 0, 0, err
	}
	// Only what this batch carried: an id the answer adds is not ours to delete.
	var done []string
	for _, s := range statuses {
		if sent[s.ID] && (s.Status == "created" || s.Status == "duplicate") {
			done = append(done, s.ID)
			delete(sent, s.ID)
		}
	}
	return len(done), 0, u.Spool.Done(done)
}

// Run uploads until ctx ends: drains the spool each round, backs off on errors.
func (u *Uploader) Run(ctx context.Context) {
	backoff := time.Duration(0)
	for {
		wait := u.Interval()
		if err := u.drain(ctx); err != nil && ctx.Err() == nil {
			backoff = nextBackoff(backoff, u.MinBackoff, u.MaxBackoff)
			wait = backoff
			if api.IsStatus(err, http.StatusUnauthorized) {
				u.Log.Error("credential rejected (agent revoked?); results stay spooled", "retry_in", wait.Round(time.Second))
			} else if !errors.Is(err, ErrRejected) {
				u.Log.Warn("upload failed; results stay spooled", "error", err, "retry_in", wait.Round(time.Second))
			}
		} else {
			backoff = 0
		}
		timer := u.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-u.kick:
			if backoff > 0 { // a kick neither cuts a back-off short nor starts it over
				select {
				case <-ctx.Done():
					timer.Stop()
					return
				case <-timer.C:
				}
			}
			timer.Stop()
		case <-timer.C:
		}
	}
}

func (u *Uploader) drain(ctx context.Context) error {
	for ctx.Err() == nil {
		sent, err := u.Once(ctx)
		if err != nil && !errors.Is(err, ErrRejected) {
			return err
		}
		if sent < u.BatchSize && !errors.Is(err, ErrRejected) {
			return nil
		}
	}
	return nil
}

// nextBackoff doubles with ±20% jitter so a fleet of agents does not retry in lockstep.
func nextBackoff(current, minimum, maximum time.Duration) time.Duration {
	next := current * 2
	if next < minimum {
		next = minimum
	}
	if next > maximum {
		next = maximum
	}
	jitter := time.Duration((rand.Float64()*0.4 - 0.2) * float64(next))
	return next + jitter
}
