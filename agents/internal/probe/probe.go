// Package probe defines what a probe is and which probes exist. A new probe type is one
// package plus one line in the registry (see registry.go).
package probe

import (
	"context"

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
