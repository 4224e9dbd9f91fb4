package plan

import (
	"encoding/json"
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
		{"iperf3 window", defs["Iperf3Window"], Iperf3Window{}},
		{"loaded window", defs["LoadedWindow"], LoadedWindow{}},
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

// The schema and the agent agree on iperf3 windows: both take a plan with one, or without
// any (servers older than perfSONAR interop), and both refuse a window on port 0.
func TestIperf3WindowsValidateAsTheAgentDecodesThem(t *testing.T) {
	schema := contract.Compile(t, "plan.v1.schema.json")
	variant := func(change func(plan map[string]any)) []byte {
		var plan map[string]any
		if err := json.Unmarshal([]byte(withWindow), &plan); err != nil {
			t.Fatal(err)
		}
		change(plan)
		body, _ := json.Marshal(plan)
		return body
	}
	window := func(plan map[string]any) map[string]any { return plan["iperf3_windows"].([]any)[0].(map[string]any) }
	for _, c := range []struct {
		name  string
		body  []byte
		valid bool
	}{
		{"with a window", []byte(withWindow), true},
		{"without windows", variant(func(plan map[string]any) { delete(plan, "iperf3_windows") }), true},
		{"port zero", variant(func(plan map[string]any) { window(plan)["port"] = 0 }), false},
		{"no end", variant(func(plan map[string]any) { delete(window(plan), "end_at") }), false},
	} {
		var doc any
		if err := json.Unmarshal(c.body, &doc); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		schemaErr := schema.Validate(doc)
		_, decodeErr := Decode(c.body)
		if (schemaErr == nil) != c.valid || (decodeErr == nil) != c.valid {
			t.Errorf("%s: schema says %v, the agent %v; want valid=%v", c.name, schemaErr, decodeErr, c.valid)
		}
	}
}
