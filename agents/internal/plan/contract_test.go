package plan

import (
	"encoding/json"
	"path/filepath"
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
		{"twamp peer", defs["TwampPeer"], TwampPeer{}},
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

const withTwampPeers = `{
  "schema_version": 1, "agent_id": "8d1f3c52-5c2e-4d1a-9a57-0c1b2a3d4e5f", "version": "v1",
  "generated_at": "2026-11-22T12:00:00Z", "valid_until": "2026-11-22T13:00:00Z",
  "upload_interval_s": 10, "host_facts_interval_s": 3600, "slots": [],
  "tests": [{"id": "latency:b", "type": "latency", "interval_s": 60,
             "peer": {"id": "0b5c7e2a-1d3f-4a6b-8c9d-0e1f2a3b4c5d", "name": "frankfurt", "address": "198.18.2.2"},
             "spec": {"packet_interval_s": 0.1, "report_interval_s": 60}}],
  "twamp_peers": [{"address": "198.18.2.2", "port": 862}, {"address": "ps-geneva.example.net", "port": 862}]
}`

// The schema and the agent agree on TWAMP peers: both take a plan with them or without them
// (servers older than the latency test), and both refuse one without an address or port.
func TestTwampPeersValidateAsTheAgentDecodesThem(t *testing.T) {
	p, err := Decode([]byte(withTwampPeers))
	if err != nil {
		t.Fatal(err)
	}
	want := []TwampPeer{{"198.18.2.2", 862}, {"ps-geneva.example.net", 862}}
	if len(p.TwampPeers) != 2 || p.TwampPeers[0] != want[0] || p.TwampPeers[1] != want[1] || p.Tests[0].Type != "latency" {
		t.Fatalf("%+v", p)
	}
	schema := contract.Compile(t, "plan.v1.schema.json")
	peer := func(plan map[string]any) map[string]any { return plan["twamp_peers"].([]any)[0].(map[string]any) }
	for _, c := range []struct {
		name   string
		change func(plan map[string]any)
		valid  bool
	}{
		{"as sent", func(map[string]any) {}, true},
		{"without peers", func(plan map[string]any) { delete(plan, "twamp_peers") }, true},
		{"no peers", func(plan map[string]any) { plan["twamp_peers"] = []any{} }, true},
		{"port zero", func(plan map[string]any) { peer(plan)["port"] = 0 }, false},
		{"port too high", func(plan map[string]any) { peer(plan)["port"] = 65536 }, false},
		{"no port", func(plan map[string]any) { delete(peer(plan), "port") }, false},
		{"empty address", func(plan map[string]any) { peer(plan)["address"] = "" }, false},
	} {
		var plan map[string]any
		if err := json.Unmarshal([]byte(withTwampPeers), &plan); err != nil {
			t.Fatal(err)
		}
		c.change(plan)
		body, _ := json.Marshal(plan)
		var doc any
		_ = json.Unmarshal(body, &doc)
		schemaErr := schema.Validate(doc)
		_, decodeErr := Decode(body)
		if (schemaErr == nil) != c.valid || (decodeErr == nil) != c.valid {
			t.Errorf("%s: schema says %v, the agent %v; want valid=%v", c.name, schemaErr, decodeErr, c.valid)
		}
	}
	// A cached plan keeps them: a restart without the server still admits the peers.
	cache := Cache{Path: filepath.Join(t.TempDir(), "plan.json")}
	if err := cache.Store(p); err != nil {
		t.Fatal(err)
	}
	if loaded, err := cache.Load(); err != nil || len(loaded.TwampPeers) != 2 || loaded.TwampPeers[1] != want[1] {
		t.Fatalf("%+v %v", loaded, err)
	}
}
