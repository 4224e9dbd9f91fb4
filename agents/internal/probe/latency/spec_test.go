package latency

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAnIntervalSendsUntilItsLastAnswerIsDueBeforeTheNextInterval(t *testing.T) {
	for _, c := range []struct {
		spec string
		want int
	}{
		{`{}`, 580}, // (60 - 2) / 0.1: perfSONAR's 10 a second, a minute at a time
		{`{"packet_interval_s": 0.01, "packet_timeout_s": 0.1, "report_interval_s": 10}`, 990},
		{`{"packet_interval_s": 0.3}`, 193},
		{`{"packet_interval_s": 1, "packet_timeout_s": 9, "report_interval_s": 10}`, 1},
	} {
		spec, err := DecodeSpec(json.RawMessage(c.spec))
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if got := spec.Packets(); got != c.want {
			t.Errorf("%s: %d packets, want %d", c.spec, got, c.want)
		}
		// The last answer is due a packet interval before the interval ends, at the latest.
		last := time.Duration(spec.Packets()-1)*spec.packetInterval() + spec.packetTimeout()
		if last > spec.reportInterval()-spec.packetInterval() {
			t.Errorf("%s: the last answer is due at %v of %v", c.spec, last, spec.reportInterval())
		}
	}
}

// Each option's own bounds are the contract's (agent/contract_test.go); together, they
// must leave time for a packet.
func TestAnIntervalWithoutTimeForAPacketIsRefused(t *testing.T) {
	_, err := DecodeSpec(json.RawMessage(`{"packet_timeout_s": 10, "report_interval_s": 10}`))
	if err == nil || !strings.Contains(err.Error(), "leaves no packet") {
		t.Fatalf("%v", err)
	}
	for _, bad := range []string{`{"count": 5}`, `{"port": "862"}`, `{} {}`} {
		if _, err := DecodeSpec(json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
