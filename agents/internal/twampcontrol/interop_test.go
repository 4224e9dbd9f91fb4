package twampcontrol

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
)

// TwampyEnv names a checkout of Nokia's twampy (github.com/nokia/twampy, Python, standard
// library only), whose "controller" is an independent full-TWAMP client. CI has no copy; a
// developer with one, and the right to bind TCP port 862 (twampy's control port is fixed),
// runs FATHOM_TWAMPY=/path/to/twampy go test -run Twampy ./internal/twampcontrol
const TwampyEnv = "FATHOM_TWAMPY"

// twampy's controller sets a session up with this server, sends its packets to the real
// reflector, and stops the session: every packet answered.
func TestTwampysControllerAgainstTheServer(t *testing.T) {
	dir := os.Getenv(TwampyEnv)
	if dir == "" {
		t.Skipf("set %s to a twampy checkout to run it", TwampyEnv)
	}
	if probe, err := net.Listen("tcp", "127.0.0.1:862"); err != nil {
		t.Skipf("twampy's controller connects to TCP port 862, which this test cannot have: %v", err)
	} else {
		probe.Close()
	}
	m := startMeshWith(t, func(s *Server) { s.Port, s.StepTimeout = 862, 10*time.Second }, "127.0.0.1")
	local, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	senderPort := local.LocalAddr().(*net.UDPAddr).Port
	local.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	controller := exec.CommandContext(ctx, "python3", "-m", "twampy", "controller", "-v", "-c", "20", "-i", "100",
		"127.0.0.1:"+strconv.Itoa(m.udpPort), "127.0.0.1:"+strconv.Itoa(senderPort))
	controller.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(dir, "src"))
	out, err := controller.CombinedOutput()
	t.Logf("twampy controller (tcp %s, reflector udp %d):\n%s", m.tcp, m.udpPort, out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"TWAMP modes supported: 1", "<<Start Accept>>", "<<Stop Sessions>>", "All packets received back"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in twampy's output", want)
		}
	}
	if strings.Contains(text, "ERROR") || strings.Contains(text, "CRITICAL") || strings.Count(text, "  0.0%") != 3 {
		t.Error("twampy reports an error or a loss")
	}
}
