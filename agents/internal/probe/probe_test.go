package probe

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeSpecKeepsDefaultsAndRefusesWhatItDoesNotKnow(t *testing.T) {
	type spec struct {
		Count int `json:"count"`
		Size  int `json:"size"`
	}
	got := spec{Count: 10, Size: 56}
	if err := DecodeSpec(json.RawMessage(`{"count": 3}`), &got); err != nil || got != (spec{3, 56}) {
		t.Fatalf("%+v %v", got, err)
	}
	if err := DecodeSpec(nil, &got); err != nil || got != (spec{3, 56}) {
		t.Fatalf("empty spec changed %+v %v", got, err)
	}
	for raw, want := range map[string]string{
		`{"count": 3, "bogus": 1}`:  "unknown field",
		`{"count": 3} {"count": 4}`: "trailing data",
		`{"count": "x"}`:            "cannot unmarshal",
		`[1]`:                       "cannot unmarshal",
	} {
		if err := DecodeSpec(json.RawMessage(raw), &got); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

func TestTargetGivesToolsABareAddressAndItsFamily(t *testing.T) {
	cases := []struct {
		address, host string
		family        int
	}{
		{"198.18.1.2", "198.18.1.2", 4},
		{"2001:db8::1", "2001:db8::1", 6},
		{"[2001:db8::1]", "2001:db8::1", 6},
		{"[::1]", "::1", 6},
		{"::ffff:198.18.1.2", "198.18.1.2", 4},
		{"fe80::2%veth0", "fe80::2%veth0", 6},
		{"[fe80::2%veth0]", "fe80::2%veth0", 6},
		{"peer.example", "peer.example", 0},
		{"[peer.example]", "[peer.example]", 0},
	}
	for _, tc := range cases {
		host, family := Target(tc.address)
		if host != tc.host || family != tc.family {
			t.Errorf("Target(%q) = %q, %d; want %q, %d", tc.address, host, family, tc.host, tc.family)
		}
	}
}
