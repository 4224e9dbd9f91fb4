package plan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/contract"
)

const validPlan = `{
  "schema_version": 1, "agent_id": "a1", "version": "v1",
  "generated_at": "2026-11-22T12:00:00Z", "valid_until": "2026-11-22T13:00:00Z",
  "upload_interval_s": 10, "host_facts_interval_s": 3600,
  "tests": [{"id": "ping:b", "type": "ping", "interval_s": 60,
             "peer": {"id": "b", "name": "frankfurt", "address": "198.18.2.2"},
             "spec": {"count": 10}}]
}`

func TestDecodeValidPlan(t *testing.T) {
	p, err := Decode([]byte(validPlan))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tests) != 1 || p.Tests[0].Peer.Address != "198.18.2.2" || string(p.Tests[0].Spec) != `{"count": 10}` {
		t.Fatalf("plan %+v", p)
	}
}

func TestDecodeRefusesMalformedPlans(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"not json":       {`{"schema_version": 1,`, "not valid JSON"},
		"future schema":  {strings.Replace(validPlan, `"schema_version": 1`, `"schema_version": 2`, 1), "not supported"},
		"no valid_until": {strings.Replace(validPlan, `"valid_until": "2026-11-22T13:00:00Z",`, "", 1), "lacks version or valid_until"},
		"zero interval":  {strings.Replace(validPlan, `"interval_s": 60`, `"interval_s": 0`, 1), "positive interval_s"},
		"no test type":   {strings.Replace(validPlan, `"type": "ping",`, "", 1), "plan test 0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestStalePlanIsNotUsable(t *testing.T) {
	p, _ := Decode([]byte(validPlan))
	if err := p.Usable(time.Date(2026, 11, 22, 12, 59, 0, 0, time.UTC)); err != nil {
		t.Fatalf("fresh plan refused: %v", err)
	}
	if err := p.Usable(time.Date(2026, 11, 22, 13, 0, 1, 0, time.UTC)); !errors.Is(err, ErrExpired) {
		t.Fatalf("stale plan: %v", err)
	}
}

func TestCacheRoundTripAndCorruption(t *testing.T) {
	cache := Cache{Path: filepath.Join(t.TempDir(), "plan.json")}
	if p, err := cache.Load(); p != nil || err != nil {
		t.Fatalf("empty cache: %v %v", p, err)
	}
	p, _ := Decode([]byte(validPlan))
	if err := cache.Store(p); err != nil {
		t.Fatal(err)
	}
	loaded, err := cache.Load()
	if err != nil || loaded.Version != "v1" || len(loaded.Tests) != 1 {
		t.Fatalf("loaded %+v %v", loaded, err)
	}
	if err := os.WriteFile(cache.Path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Load(); err == nil {
		t.Fatal("a corrupt cache must be an error, not an empty plan")
	}
}

func TestDecodeSlotsAndRefuseIncompleteOnes(t *testing.T) {
	withSlot := strings.Replace(validPlan, `"tests":`, `"slots": [{"id": "s1", "test_id": "m/tput:b", "type": "throughput",
	  "start_at": "2026-11-22T12:30:00Z", "peer": {"id": "b", "name": "frankfurt", "address": "198.18.2.2"},
	  "spec": {"duration_s": 5}}], "tests":`, 1)
	p, err := Decode([]byte(withSlot))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Slots) != 1 || p.Slots[0].StartAt.Minute() != 30 || p.Slots[0].Test().Peer.Name != "frankfurt" {
		t.Fatalf("slots %+v", p.Slots)
	}
	noStart := strings.Replace(withSlot, `"start_at": "2026-11-22T12:30:00Z",`, "", 1)
	if _, err := Decode([]byte(noStart)); err == nil || !strings.Contains(err.Error(), "slot 0") {
		t.Fatalf("slot without start accepted: %v", err)
	}
}

func TestDecodeIperf3CredentialsAndRefuseOnesThatCouldInjectLines(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	withAuth := strings.Replace(validPlan, `"tests":`, `"slots": [{"id": "s1", "test_id": "m/tput:b", "type": "throughput",
	  "start_at": "2026-11-22T12:30:00Z", "peer": {"id": "b", "name": "frankfurt", "address": "198.18.2.2"},
	  "spec": {"duration_s": 5}, "iperf3_auth": {"username": "slot-1", "password": "pw", "public_key": "KEY"}}],
	  "iperf3_users": [{"username": "slot-2", "password_sha256": "`+hash+`"}], "tests":`, 1)
	p, err := Decode([]byte(withAuth))
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Slots[0].Test().Iperf3Auth; a == nil || a.Username != "slot-1" || a.PublicKey != "KEY" {
		t.Fatalf("slot credential not carried to the probe: %+v", a)
	}
	if len(p.Iperf3Users) != 1 || p.Iperf3Users[0].PasswordSHA256 != hash {
		t.Fatalf("users %+v", p.Iperf3Users)
	}
	cases := map[string]struct{ old, new, want string }{
		"newline in a user":   {`"username": "slot-2"`, `"username": "slot-2,x\nroot"`, "iperf3 user 0"},
		"comma in a user":     {`"username": "slot-2"`, `"username": "a,b"`, "iperf3 user 0"},
		"hash not hex":        {hash, strings.Repeat("zz", 32), "iperf3 user 0"},
		"short hash":          {hash, "ab", "iperf3 user 0"},
		"auth without a key":  {`"public_key": "KEY"`, `"public_key": ""`, "slot 0"},
		"auth bad username":   {`"username": "slot-1"`, `"username": "a b"`, "slot 0"},
		"auth empty password": {`"password": "pw"`, `"password": ""`, "slot 0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			body := strings.Replace(withAuth, tc.old, tc.new, 1)
			if _, err := Decode([]byte(body)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

const withWindow = `{
  "schema_version": 1, "agent_id": "8d1f3c52-5c2e-4d1a-9a57-0c1b2a3d4e5f", "version": "v1",
  "generated_at": "2026-11-22T12:00:00Z", "valid_until": "2026-11-22T13:00:00Z",
  "upload_interval_s": 10, "host_facts_interval_s": 3600, "tests": [], "slots": [],
  "iperf3_windows": [{"slot_id": "0b5c7e2a-1d3f-4a6b-8c9d-0e1f2a3b4c5d",
    "start_at": "2026-11-22T12:30:00Z", "end_at": "2026-11-22T12:30:40Z", "port": 5203,
    "peer_name": "ps-geneva", "peer_address": "198.18.9.9"}]
}`

func TestDecodeIperf3WindowsAndRefuseMalformedOnes(t *testing.T) {
	p, err := Decode([]byte(withWindow))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Iperf3Windows) != 1 {
		t.Fatalf("windows %+v", p.Iperf3Windows)
	}
	if w := p.Iperf3Windows[0]; w.Port != 5203 || w.PeerName != "ps-geneva" || w.EndAt.Sub(w.StartAt) != 40*time.Second {
		t.Fatalf("window %+v", w)
	}
	cases := map[string]struct{ old, new, want string }{
		"no slot id":        {`"slot_id": "0b5c7e2a-1d3f-4a6b-8c9d-0e1f2a3b4c5d",`, ``, "iperf3 window 0: slot_id"},
		"no start":          {`"start_at": "2026-11-22T12:30:00Z",`, ``, "iperf3 window 0: slot_id"},
		"ends before":       {`"end_at": "2026-11-22T12:30:40Z"`, `"end_at": "2026-11-22T12:29:00Z"`, "later end_at"},
		"ends at its start": {`"end_at": "2026-11-22T12:30:40Z"`, `"end_at": "2026-11-22T12:30:00Z"`, "later end_at"},
		"port zero":         {`"port": 5203`, `"port": 0`, "port 0 out of range"},
		"port too high":     {`"port": 5203`, `"port": 65536`, "port 65536 out of range"},
		"port not a number": {`"port": 5203`, `"port": "5203"`, "not valid JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(strings.Replace(withWindow, tc.old, tc.new, 1))); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A plan cached to disk keeps its windows: a restart without the server still opens them.
func TestCacheKeepsIperf3Windows(t *testing.T) {
	cache := Cache{Path: filepath.Join(t.TempDir(), "plan.json")}
	p, _ := Decode([]byte(withWindow))
	if err := cache.Store(p); err != nil {
		t.Fatal(err)
	}
	loaded, err := cache.Load()
	if err != nil || len(loaded.Iperf3Windows) != 1 || loaded.Iperf3Windows[0] != p.Iperf3Windows[0] {
		t.Fatalf("loaded %+v %v", loaded, err)
	}
}

const withLoaded = `{
  "schema_version": 1, "agent_id": "8d1f3c52-5c2e-4d1a-9a57-0c1b2a3d4e5f", "version": "v1",
  "generated_at": "2026-11-22T12:00:00Z", "valid_until": "2026-11-22T13:00:00Z",
  "upload_interval_s": 10, "host_facts_interval_s": 3600, "tests": [], "slots": [],
  "loaded_windows": [{"start_at": "2026-11-22T12:30:00Z", "end_at": "2026-11-22T12:30:40Z",
    "agent_ids": ["0b5c7e2a-1d3f-4a6b-8c9d-0e1f2a3b4c5d", "1c6d8f3b-2e4a-4b7c-9d0e-1f2a3b4c5d6e"]}]
}`

func TestDecodeLoadedWindowsAndRefuseMalformedOnes(t *testing.T) {
	p, err := Decode([]byte(withLoaded))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.LoadedWindows) != 1 {
		t.Fatalf("windows %+v", p.LoadedWindows)
	}
	w := p.LoadedWindows[0]
	if w.EndAt.Sub(w.StartAt) != 40*time.Second || !w.Loads("1c6d8f3b-2e4a-4b7c-9d0e-1f2a3b4c5d6e") || w.Loads("8d1f3c52-5c2e-4d1a-9a57-0c1b2a3d4e5f") || w.Loads("") {
		t.Fatalf("window %+v", w)
	}
	schema := contract.Compile(t, "plan.v1.schema.json")
	cases := map[string]struct{ old, new, want string }{
		"as sent": {``, ``, ""},
		"without windows": {withLoaded[strings.Index(withLoaded, `,
  "loaded_windows"`):], "\n}", ""},
		"no start":      {`"start_at": "2026-11-22T12:30:00Z",`, ``, "loaded window 0"},
		"ends at start": {`"end_at": "2026-11-22T12:30:40Z"`, `"end_at": "2026-11-22T12:30:00Z"`, "later end_at"},
		"no agents":     {`"agent_ids": [`, `"agent_ids": [], "x": [`, "loaded window 0"},
		"not a list":    {`"agent_ids": [`, `"agent_ids": 7, "x": [`, "not valid JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			body := strings.Replace(withLoaded, tc.old, tc.new, 1)
			_, err := Decode([]byte(body))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			// The schema agrees, but for the order of the two times, which it cannot express.
			var doc any
			if json.Unmarshal([]byte(body), &doc) == nil && name != "ends at start" {
				if schemaErr := schema.Validate(doc); (schemaErr == nil) != (tc.want == "") {
					t.Fatalf("schema says %v, want valid=%v", schemaErr, tc.want == "")
				}
			}
		})
	}
}
