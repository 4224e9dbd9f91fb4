package latency

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
)

// TwampyEnv names a checkout of Nokia's twampy (github.com/nokia/twampy, Python, standard
// library only): an independent TWAMP-light implementation. No package registry this
// project installs from carries it, so CI cannot run this test; a developer with a copy runs
// FATHOM_TWAMPY=/path/to/twampy go test -run Twampy ./internal/probe/latency
const TwampyEnv = "FATHOM_TWAMPY"

// Fathom's sender against twampy's reflector ("responder"): every packet answered, the
// delays of loopback, and the loss split adding up. twampy numbers its answers by its own
// count, as RFC 5357 asks, so the forward/backward split holds too.
func TestTheSenderAgainstTwampysReflector(t *testing.T) {
	dir := os.Getenv(TwampyEnv)
	if dir == "" {
		t.Skipf("set %s to a twampy checkout to run it", TwampyEnv)
	}
	probe, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := probe.LocalAddr().(*net.UDPAddr).Port
	probe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	responder := exec.CommandContext(ctx, "python3", "-m", "twampy", "responder", "-q", "127.0.0.1:"+strconv.Itoa(port))
	responder.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(dir, "src"))
	if err := responder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = responder.Wait() }()
	// The sender's first packets would be refused before python has bound the port: a fixed
	// second was not enough on a loaded machine (94 of 97 packets "lost").
	waitUntilBound(t, port)

	spec := Spec{PacketIntervalS: 0.02, PacketTimeoutS: 1, SizeBytes: 41, Port: port, ReportIntervalS: 3}
	l, err := New(hostclock.For(true)).Measure(context.Background(), spec, "127.0.0.1", time.Now().Add(spec.reportInterval()))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent %d answered %d lost %d/%d dup %d malformed %d; forward %+v backward %+v round trip %+v; reflector clock %+v",
		l.Sent, l.Answered, l.Forward.Lost, l.Backward.Lost, l.Duplicates, l.Malformed,
		show(l.Forward.Delay.P50Ms), show(l.Backward.Delay.P50Ms), show(l.RoundTrip.P50Ms), l.ReflectorClock)
	if l.Sent < 50 || l.Answered != l.Sent || l.Malformed != 0 || l.Forward.Lost+l.Backward.Lost != 0 {
		t.Fatalf("against twampy: %+v", l)
	}
	if l.RoundTrip.P50Ms == nil || *l.RoundTrip.P50Ms < 0 || *l.RoundTrip.P50Ms > 50 {
		t.Fatalf("round trip %v", show(l.RoundTrip.P50Ms))
	}
}

// waitUntilBound waits until something on loopback holds the UDP port (binding it fails).
func waitUntilBound(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			return
		}
		conn.Close()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing bound UDP port %d within 20 s", port)
}

func show(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// twampy's sender against the agent's reflector: every packet answered, none lost either way
// as twampy counts them from the answers' fields.
func TestTwampysSenderAgainstTheAgentsReflector(t *testing.T) {
	dir := os.Getenv(TwampyEnv)
	if dir == "" {
		t.Skipf("set %s to a twampy checkout to run it", TwampyEnv)
	}
	_, port, stop := startReflector(t, "127.0.0.1")
	sender := exec.Command("python3", "-m", "twampy", "sender", "-c", "20", "-i", "100", "127.0.0.1:"+strconv.Itoa(port))
	sender.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(dir, "src"))
	out, err := sender.CombinedOutput()
	counts := stop()
	t.Logf("twampy sender:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	if counts.Answered != 20 || counts.Malformed != 0 || counts.Refused != 0 {
		t.Fatalf("the reflector counted %+v", counts)
	}
	if !strings.Contains(string(out), "Roundtrip:") || strings.Count(string(out), " 0.0%") != 3 {
		t.Fatalf("twampy saw loss or no round trip:\n%s", out)
	}
}
