package throughput

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/iperfserver"
	"github.com/fathom-net/fathom/agents/internal/plan"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// listening reads /proc/net/tcp for a listener on port: asking iperf3 by connecting would
// count as a (failed) test.
func listening(port int) bool {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	suffix := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(string(data), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) > 3 && strings.HasSuffix(fields[1], suffix) && fields[3] == "0A" {
			return true
		}
	}
	return false
}

func startAuthenticatingServer(t *testing.T) (int, *iperfserver.Auth) {
	t.Helper()
	if !iperfserver.Supported(context.Background(), "iperf3") {
		t.Skip("iperf3 with authentication is not installed")
	}
	auth, err := iperfserver.PrepareAuth(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	server := &iperfserver.Server{
		Binary: "iperf3", Port: port, Bind: "127.0.0.1", Auth: auth,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { server.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for !listening(port) {
		if time.Now().After(deadline) {
			t.Fatal("iperf3 server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return port, auth
}

func slotTest(port int, auth *plan.Iperf3Auth) plan.Test {
	test := loopbackTest(`{"duration_s": 1, "omit_s": 0, "port": ` + strconv.Itoa(port) + `}`)
	test.Iperf3Auth = auth
	return test
}

// The agent's server admits the client of a slot its plan lists, and no one else: not a
// client without credentials, not a wrong password, not a slot the plan has dropped.
func TestAnAuthenticatingServerAdmitsOnlyThePlannedSlotsClient(t *testing.T) {
	port, auth := startAuthenticatingServer(t)
	ctx := testContext(t, 60*time.Second)
	p := New("iperf3")
	p.Slack = 10 * time.Second
	credential := &plan.Iperf3Auth{Username: "slot-1a2b", Password: "per-slot-secret-0123456789", PublicKey: auth.PublicKey}
	run := func(a *plan.Iperf3Auth) result.Result { return p.Run(ctx, slotTest(port, a), "v1") }

	if res := run(credential); res.Status != result.StatusFailed || !strings.Contains(res.Error, "authorization failed") {
		t.Fatalf("a slot not (yet) in the plan: %s %q", res.Status, res.Error)
	}
	sum := sha256.Sum256([]byte("{" + credential.Username + "}" + credential.Password))
	users := []plan.Iperf3User{{Username: credential.Username, PasswordSHA256: hex.EncodeToString(sum[:])}}
	if err := auth.WriteUsers(users); err != nil {
		t.Fatal(err)
	}
	if res := run(credential); res.Status != result.StatusOK || res.Throughput.Summary.ReceiverBitsPerS <= 0 {
		t.Fatalf("the planned slot's client was refused (no restart needed): %s %q", res.Status, res.Error)
	}
	if res := run(nil); res.Status != result.StatusFailed {
		t.Fatalf("a client without credentials was admitted")
	}
	wrong := *credential
	wrong.Password = "guessed-password-0123456789"
	if res := run(&wrong); res.Status != result.StatusFailed || !strings.Contains(res.Error, "authorization failed") {
		t.Fatalf("a wrong password: %s %q", res.Status, res.Error)
	}
	if err := auth.WriteUsers(nil); err != nil {
		t.Fatal(err)
	}
	if res := run(credential); res.Status != result.StatusFailed {
		t.Fatalf("a slot the plan dropped was still admitted")
	}
}
