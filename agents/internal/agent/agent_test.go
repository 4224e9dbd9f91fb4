package agent

import (
	"testing"

	"github.com/fathom-net/fathom/agents/internal/config"
	"github.com/fathom-net/fathom/agents/internal/probe/flowsweep"
	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/probe/throughput"
	"github.com/fathom-net/fathom/agents/internal/probe/trace"
)

func TestEveryProbeTypeIsRegisteredWithItsConfiguredBinary(t *testing.T) {
	cfg := config.Defaults()
	cfg.Ping.Binary, cfg.Iperf3.Binary, cfg.Trace.Binary = "/opt/ping", "/opt/iperf3", "/opt/traceroute"
	probes := Probes(cfg)
	if len(probes) != 4 {
		t.Fatalf("%d probes", len(probes))
	}
	if p, ok := probes[ping.TestType].(*ping.Prober); !ok || p.Binary != "/opt/ping" {
		t.Errorf("ping: %#v", probes[ping.TestType])
	}
	if p, ok := probes[throughput.TestType].(*throughput.Prober); !ok || p.Binary != "/opt/iperf3" {
		t.Errorf("throughput: %#v", probes[throughput.TestType])
	}
	if p, ok := probes[trace.TestType].(*trace.Prober); !ok || p.Binary != "/opt/traceroute" {
		t.Errorf("trace: %#v", probes[trace.TestType])
	}
	if _, ok := probes[flowsweep.TestType].(*flowsweep.Prober); !ok {
		t.Errorf("flowsweep: %#v", probes[flowsweep.TestType])
	}
}
