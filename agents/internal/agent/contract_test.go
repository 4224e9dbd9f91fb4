package agent

import (
	"encoding/json"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/contract"
	"github.com/fathom-net/fathom/agents/internal/probe/flowsweep"
	"github.com/fathom-net/fathom/agents/internal/probe/latency"
	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/probe/throughput"
	"github.com/fathom-net/fathom/agents/internal/probe/trace"
)

// decodeWith turns a probe's DecodeSpec into the check CheckOptions runs.
func decodeWith[S any](decode func(json.RawMessage) (S, error)) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		_, err := decode(raw)
		return err
	}
}

// Each probe decodes exactly its kind's options of contract/test-options/: the same fields and
// defaults, and its validation accepts every bound and enum value and refuses what lies beyond.
func TestEveryProbesOptionsMatchTheContract(t *testing.T) {
	probes := map[string]struct {
		defaults any
		decode   func(json.RawMessage) error
	}{
		ping.TestType:       {ping.DefaultSpec(), decodeWith(ping.DecodeSpec)},
		throughput.TestType: {throughput.DefaultSpec(), decodeWith(throughput.DecodeSpec)},
		flowsweep.TestType:  {flowsweep.DefaultSpec(), decodeWith(flowsweep.DecodeSpec)},
		trace.TestType:      {trace.DefaultSpec(), decodeWith(trace.DecodeSpec)},
		latency.TestType:    {latency.DefaultSpec(), decodeWith(latency.DecodeSpec)},
	}
	for kind := range Probes(config.Defaults()) {
		probe, ok := probes[kind]
		if !ok {
			t.Errorf("probe %s has no options check here", kind)
			continue
		}
		t.Run(kind, func(t *testing.T) { contract.CheckOptions(t, kind, probe.defaults, probe.decode) })
	}
}
