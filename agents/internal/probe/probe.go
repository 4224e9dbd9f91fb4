// Package probe defines what a probe is and which probes exist. A new probe type is one
// package plus one line in the registry (see registry.go).
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// Prober runs one test of its type and always returns a result: a run that could not be
// carried out is a failed result with its reason, never silence.
type Prober interface {
	Run(ctx context.Context, test plan.Test, planVersion string) result.Result
}

// Registry maps a test type to its prober.
type Registry map[string]Prober

// DecodeSpec reads a plan's spec over the defaults already in spec, refusing unknown fields
// and trailing data: a spec this agent does not fully understand is not run half-understood.
func DecodeSpec(raw json.RawMessage, spec any) error {
	if len(raw) == 0 {
		return nil
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(spec); err != nil {
		return err
	}
	if decoder.More() {
		return errors.New("trailing data after the spec")
	}
	return nil
}
