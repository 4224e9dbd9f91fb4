package iperfserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/plan"
)

func TestTheKeyIsMadeOnceAndKeptPrivate(t *testing.T) {
	dir := t.TempDir()
	first, err := PrepareAuth(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.PublicKey, "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("public key %q", first.PublicKey)
	}
	again, err := PrepareAuth(dir)
	if err != nil || again.PublicKey != first.PublicKey {
		t.Fatalf("a restart made a new key (peers' plans would carry the old one): %v", err)
	}
	for _, path := range []string{first.KeyPath, first.UsersPath} {
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", path, info.Mode(), err)
		}
	}
	if data, _ := os.ReadFile(first.UsersPath); strings.Contains(string(data), ",") {
		t.Fatalf("a fresh server admits someone: %q", data)
	}
}

func TestAnUnreadableKeyIsAnErrorNotANewKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "iperf3-rsa.pem"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareAuth(dir); err == nil || !strings.Contains(err.Error(), "no PEM block") {
		t.Fatalf("error %v", err)
	}
}

func TestUsersFileHasOneLinePerSlotAndArgsNameIt(t *testing.T) {
	auth, err := PrepareAuth(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Repeat("0f", 32)
	if err := auth.WriteUsers([]plan.Iperf3User{{Username: "slot-a", PasswordSHA256: hash}, {Username: "slot-b", PasswordSHA256: hash}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(auth.UsersPath)
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 3 || lines[1] != "slot-a,"+hash {
		t.Fatalf("users file %q", data)
	}
	args := strings.Join((&Server{Port: 5201, Auth: auth}).Args(), " ")
	if !strings.Contains(args, "--authorized-users-path "+auth.UsersPath) || !strings.Contains(args, "--time-skew-threshold 60") {
		t.Fatalf("args %s", args)
	}
}
