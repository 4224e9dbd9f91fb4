// Package result holds the wire types of result contract v1, the shape one measurement keeps
// from the agent to the database. The JSON Schema in the repository's contract/ is the
// source of truth; contract_test.go checks these types against it and its example files.
package result

import (
	"time"

	"github.com/google/uuid"
)

// SchemaVersion is the contract version every batch declares.
const SchemaVersion = 1

// Status values of a run.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
	// StatusMissed is a run the server planned (a slot) that the agent could not start:
	// the slot passed while the agent was down, busy or without the plan. Error says why.
	StatusMissed = "missed"
)

// Batch is what the uploader POSTs to /api/v1/agent/results/.
type Batch struct {
	SchemaVersion int      `json:"schema_version"`
	Results       []Result `json:"results"`
}

// Result is one probe run. Its ID is made when the run starts, so a retried upload can never
// store it twice.
type Result struct {
	ID          string    `json:"id"`
	TestType    string    `json:"test_type"`
	TestID      string    `json:"test_id"`
	PlanVersion string    `json:"plan_version,omitempty"`
	PeerID      *string   `json:"peer_id"`
	Target      string    `json:"target"`
	StartedAt   time.Time `json:"started_at"`
	EndedAt     time.Time `json:"ended_at"`
	Status      string    `json:"status"`
	Error       string    `json:"error"`
	// SlotID names the server-planned slot an exclusive run (throughput) filled.
	SlotID     *string     `json:"slot_id,omitempty"`
	Ping       *Ping       `json:"ping,omitempty"`
	Throughput *Throughput `json:"throughput,omitempty"`
	FlowSweep  *FlowSweep  `json:"flowsweep,omitempty"`
	Trace      *Trace      `json:"trace,omitempty"`
	Latency    *Latency    `json:"latency,omitempty"`
}

// Ping is the outcome of one ping run: one sample per packet sent plus one per duplicate.
type Ping struct {
	Count       int          `json:"count"`
	IntervalS   float64      `json:"interval_s"`
	SizeBytes   int          `json:"size_bytes"`
	TTL         *int         `json:"ttl"`
	Transmitted int          `json:"transmitted"`
	Received    int          `json:"received"`
	Duplicates  int          `json:"duplicates"`
	Errors      int          `json:"errors"`
	Samples     []PingSample `json:"samples"`
}

// PingSample is one packet: RTTMs nil means lost. RTTs are kept as ping printed them: ping
// rounds to 3 decimals below 1 ms, 2 below 10 ms, 1 below 100 ms and to whole ms above.
type PingSample struct {
	Seq       int       `json:"seq"`
	Time      time.Time `json:"time"`
	RTTMs     *float64  `json:"rtt_ms"`
	TTL       *int      `json:"ttl"`
	Duplicate bool      `json:"duplicate"`
	Error     string    `json:"error,omitempty"`
}

// New starts a result for a run beginning now: a fresh id and the start time.
func New(testType, testID, planVersion, target string, peerID string, started time.Time) Result {
	r := Result{
		ID:          uuid.NewString(),
		TestType:    testType,
		TestID:      testID,
		PlanVersion: planVersion,
		Target:      target,
		StartedAt:   started.UTC(),
		EndedAt:     started.UTC(),
		Status:      StatusOK,
	}
	if peerID != "" {
		r.PeerID = &peerID
	}
	return r
}

// Fail marks the result failed with a reason (never empty: the contract requires one).
func (r *Result) Fail(reason string) {
	if reason == "" {
		reason = "unknown error"
	}
	r.Status = StatusFailed
	r.Error = reason
	r.clearOutcome()
}

// Miss marks a planned run that never started, with the reason.
func (r *Result) Miss(reason string) {
	r.Fail(reason)
	r.Status = StatusMissed
}

func (r *Result) clearOutcome() {
	r.Ping, r.Throughput, r.FlowSweep, r.Trace, r.Latency = nil, nil, nil, nil, nil
}
