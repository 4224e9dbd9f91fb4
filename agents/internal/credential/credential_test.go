package credential

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveWritesPrivateFileAndLoadReadsIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	want := Credential{Server: "https://fathom.example", AgentID: "a1", Name: "athens", Credential: "s3cret"}
	if err := Save(dir, want, false); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(Path(dir))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credential mode %v %v", info.Mode().Perm(), err)
	}
	dirInfo, _ := os.Stat(dir)
	if dirInfo.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v", dirInfo.Mode().Perm())
	}
	got, err := Load(dir)
	if err != nil || got != want {
		t.Fatalf("load %+v %v", got, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".credential-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

func TestSaveRefusesToOverwriteWithoutForce(t *testing.T) {
	dir := t.TempDir()
	first := Credential{Server: "https://a", AgentID: "1", Credential: "x"}
	if err := Save(dir, first, false); err != nil {
		t.Fatal(err)
	}
	if err := Save(dir, Credential{Server: "https://b", AgentID: "2", Credential: "y"}, false); !errors.Is(err, ErrExists) {
		t.Fatalf("overwrite without force: %v", err)
	}
	if got, _ := Load(dir); got != first {
		t.Fatal("the refused save changed the stored credential")
	}
	if err := Save(dir, Credential{Server: "https://b", AgentID: "2", Credential: "y"}, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := Load(dir); got.AgentID != "2" {
		t.Fatal("force did not replace the credential")
	}
}

func TestLoadRefusesBadFiles(t *testing.T) {
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"readable by others", `{"server":"s","agent_id":"a","credential":"c"}`, 0o644, "readable by others"},
		{"not json", `{"server":`, 0o600, "not valid JSON"},
		{"missing credential", `{"server":"s","agent_id":"a"}`, 0o600, "lacks server, agent_id or credential"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(Path(dir), []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(Path(dir), tc.mode); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not enrolled") {
		t.Fatalf("missing file: %v", err)
	}
}
