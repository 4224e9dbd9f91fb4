package hostfacts

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fathom-net/fathom/agents/internal/contract"
)

const schemaName = "host-facts.v1.schema.json"

// The facts this agent reports have the contract's fields and sysctls, and a real collection
// validates against contract/host-facts.v1.schema.json.
func TestFactsMatchTheContract(t *testing.T) {
	doc := contract.Load(t, schemaName)
	contract.SameSet(t, "host facts", keys(doc["properties"]), contract.JSONFields(t, Facts{}))
	interfaceSchema := doc["$defs"].(map[string]any)["Interface"].(map[string]any)
	contract.SameSet(t, "interface", keys(interfaceSchema["properties"]), contract.JSONFields(t, Interface{}))
	contract.SameSet(t, "sysctls", contract.Enum(t, doc, "$defs", "ReportedSysctl"), Sysctls)

	schema := contract.Compile(t, schemaName)
	facts := (&Collector{Root: t.TempDir(), IperfBinary: "/nonexistent/iperf3", Now: func() time.Time { return time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC) },
		Addresses: func(string) []string { return nil }}).
		Collect(context.Background())
	facts.Sysctls["net.ipv4.tcp_rmem"] = "4096 131072 6291456"
	validate(t, schema, facts, true)
	facts.Sysctls["net.ipv4.tcp_mem"] = "1 2 3"
	validate(t, schema, facts, false)
}

func validate(t *testing.T, schema *jsonschema.Schema, facts Facts, want bool) {
	t.Helper()
	body, err := json.Marshal(facts)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); (err == nil) != want {
		t.Fatalf("facts %s: valid %v, want %v (%v)", body, err == nil, want, err)
	}
}

func keys(node any) []string {
	object, _ := node.(map[string]any)
	out := make([]string, 0, len(object))
	for key := range object {
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}
