// Package credential stores the agent's identity: written once at enrolment, read at start,
// kept in a 0600 file in a 0700 directory.
package credential

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// FileName is the credential's name inside the state directory.
const FileName = "credential.json"

// Credential is what enrolment returns plus the server it belongs to.
type Credential struct {
	Server     string `json:"server"`
	AgentID    string `json:"agent_id"`
	Name       string `json:"name"`
	Credential string `json:"credential"`
}

// ErrExists refuses to overwrite an enrolled agent's identity by accident.
var ErrExists = errors.New("a credential already exists (use --force to replace it)")

// Path is the credential file in stateDir.
func Path(stateDir string) string { return filepath.Join(stateDir, FileName) }

// Save writes the credential atomically with mode 0600.
func Save(stateDir string, c Credential, force bool) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(stateDir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(Path(stateDir)); err == nil && !force {
		return fmt.Errorf("%s: %w", Path(stateDir), ErrExists)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(stateDir, ".credential-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
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
	return os.Rename(tmp.Name(), Path(stateDir))
}

// Load reads the credential and refuses one that others can read.
func Load(stateDir string) (Credential, error) {
	var c Credential
	path := Path(stateDir)
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, fmt.Errorf("not enrolled: %s does not exist (run `fathom-agent enroll` first)", path)
	}
	if err != nil {
		return c, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return c, fmt.Errorf("%s is readable by others (mode %v): chmod 600 it", path, info.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s is not valid JSON: %w", path, err)
	}
	if c.Server == "" || c.AgentID == "" || c.Credential == "" {
		return c, fmt.Errorf("%s lacks server, agent_id or credential", path)
	}
	return c, nil
}
