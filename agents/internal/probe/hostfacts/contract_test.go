package hostfacts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fathom-net/fathom/agents/internal/contract"
	"github.com/fathom-net/fathom/agents/internal/hostclock"
)

const schemaName = "host-facts.v1.schema.json"

// The facts this agent reports have the contract's fields and sysctls, and a real collection
// validates against contract/host-facts.v1.schema.json.
func TestFactsMatchTheContract(t *testing.T) {
	doc := contract.Load(t, schemaName)
	contract.SameSet(t, "host facts", keys(doc["properties"]), contract.JSONFields(t, Facts{}))
	interfaceSchema := doc["$defs"].(map[string]any)["Interface"].(map[string]any)
	contract.SameSet(t, "interface", keys(interfaceSchema["properties"]), contract.JSONFields(t, Interface{}))
	clockSchema := doc["$defs"].(map[string]any)["Clock"].(map[string]any)
	contract.SameSet(t, "clock", keys(clockSchema["properties"]), contract.JSONFields(t, Clock{}))
	contract.SameSet(t, "clock sources", contract.Enum(t, doc, "$defs", "Clock", "properties", "source"),
		[]string{ClockKernel, ClockShared})
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

// Every clock the agent can report validates, from the lab's shared clock to an unreadable
// one and the kernel's largest error; an agent without it (older) does too.
func TestClockMatchesTheContract(t *testing.T) {
	schema := contract.Compile(t, schemaName)
	base := Facts{CollectedAt: time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC), Interfaces: []Interface{}, Sysctls: map[string]string{}}
	validate(t, schema, base, true)
	clocks := []Clock{
		ClockOf(hostclock.State{Synchronized: true, MaxError: 400 * time.Microsecond}, false, nil),
		ClockOf(hostclock.Shared, true, nil),
		ClockOf(hostclock.Unknown, false, errors.New("adjtimex: not Linux")),
		ClockOf(hostclock.State{MaxError: time.Hour}, false, nil),
	}
	for _, clock := range clocks {
		facts := base
		facts.Clock = &clock
		validate(t, schema, facts, true)
	}
	bad := ClockOf(hostclock.Shared, true, nil)
	bad.Source = "gps"
	base.Clock = &bad
	validate(t, schema, base, false)
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
