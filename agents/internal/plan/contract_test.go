package plan

import (
	"sort"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/contract"
)

// The plan this agent decodes has the fields of contract/plan.v1.schema.json, no more, no fewer.
func TestPlanMatchesTheContract(t *testing.T) {
	doc := contract.Load(t, "plan.v1.schema.json")
	defs := doc["$defs"].(map[string]any)
	for _, c := range []struct {
		what   string
		schema any
		agent  any
	}{
		{"plan", doc, Plan{}},
		{"planned test", defs["PlannedTest"], Test{}},
		{"planned slot", defs["PlannedSlot"], Slot{}},
		{"peer", defs["Peer"], Peer{}},
		{"iperf3 user", defs["Iperf3User"], Iperf3User{}},
		{"iperf3 auth", defs["Iperf3Auth"], Iperf3Auth{}},
	} {
		properties := c.schema.(map[string]any)["properties"].(map[string]any)
		names := make([]string, 0, len(properties))
		for name := range properties {
			names = append(names, name)
		}
		sort.Strings(names)
		contract.SameSet(t, c.what, names, contract.JSONFields(t, c.agent))
	}
}
