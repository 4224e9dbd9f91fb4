package iperfserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/plan"
)

// KeyBits is the size of the server's RSA key; iperf3 encrypts a client's credential, a
// timestamp and the username to it, which must fit in one RSA block.
const KeyBits = 2048

// Auth is the iperf3 server's authentication: its RSA key and the file of the clients it
// admits (the clients of the slots the plan says it serves).
type Auth struct {
	KeyPath   string
	UsersPath string
	// PublicKey is the PEM the agent reports in its host facts, for peers to encrypt to.
	PublicKey string
}

// Supported reports whether binary was built with authentication (iperf3 says so in
// --version since 3.8; Debian's and most distributions' builds have it).
func Supported(ctx context.Context, binary string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, binary, "--version").Output()
	return strings.Contains(string(out), "authentication")
}

// PrepareAuth loads the server's key from dir, creating it on first use, and starts with
// an empty users file: until a plan names its clients, the server admits no one.
func PrepareAuth(dir string) (*Auth, error) {
	a := &Auth{KeyPath: filepath.Join(dir, "iperf3-rsa.pem"), UsersPath: filepath.Join(dir, "iperf3-users.csv")}
	key, err := loadOrCreateKey(a.KeyPath)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	a.PublicKey = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	// What the last run's plan allowed is not carried over: a plan in force says it again.
	if err := a.WriteUsers(nil); err != nil {
		return nil, err
	}
	return a, nil
}

func loadOrCreateKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM block", path)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		key, ok := parsed.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s: not an RSA key", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return key, writeAtomically(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// WriteUsers replaces the users file; iperf3 reads it at every authentication, so a new
// plan's clients are admitted without a restart, and the last plan's leave with their slots.
func (a *Auth) WriteUsers(users []plan.Iperf3User) error {
	var b strings.Builder
	b.WriteString("# written by fathom-agent from its plan: one line per slot a peer tests in\n")
	for _, user := range users {
		fmt.Fprintf(&b, "%s,%s\n", user.Username, user.PasswordSHA256)
	}
	return writeAtomically(a.UsersPath, []byte(b.String()))
}

// writeAtomically leaves either the old file or the new one, readable by its owner only.
func writeAtomically(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
