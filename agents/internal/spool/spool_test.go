package spool

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fathom-net/fathom/agents/internal/result"
)

// id names a test result: the UUID a name hashes to, as result ids are UUIDs.
func id(name string) string { return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String() }

func sample(name string) result.Result {
	r := result.New("ping", "ping:x", "v", "198.18.1.2", "", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	r.ID = id(name)
	r.Fail("test")
	return r
}

func TestPutPendingDoneRoundTrip(t *testing.T) {
	s, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Written c, b, a but dated a, b, c: the order is the files' mtimes,
	// set here because a filesystem's clock ticks coarser than a test sleeps
	// (the kernel stamps files at jiffy granularity).
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, name := range []string{"c", "b", "a"} {
		if err := s.Put(sample(name)); err != nil {
			t.Fatal(err)
		}
		written := base.Add(time.Duration(2-i) * time.Second)
		if err := os.Chtimes(filepath.Join(s.pendingDir(), id(name)+".json"), written, written); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := s.Pending(2)
	if err != nil || len(entries) != 2 || entries[0].ID != id("a") || entries[1].ID != id("b") {
		t.Fatalf("pending %v %v", entries, err)
	}
	if err := s.Done([]string{id("a")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject([]string{id("b")}); err != nil {
		t.Fatal(err)
	}
	if pending, rejected := s.Counts(); pending != 1 || rejected != 1 {
		t.Fatalf("counts %d %d", pending, rejected)
	}
	info, _ := os.Stat(filepath.Join(s.dir, "pending"))
	if info.Mode().Perm() != 0o700 {
		t.Fatalf("spool dir mode %v", info.Mode().Perm())
	}
}

// The backlog is the pending results alone: not the rejected ones, not a result still
// being written.
func TestBacklogCountsWhatWaitsToBeUploaded(t *testing.T) {
	s, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if results, size, err := s.Backlog(); err != nil || results != 0 || size != 0 {
		t.Fatalf("empty: %d %d %v", results, size, err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := s.Put(sample(name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Reject([]string{id("c")}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.pendingDir(), ".tmp-123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	one, _ := os.Stat(filepath.Join(s.pendingDir(), id("a")+".json"))
	two, _ := os.Stat(filepath.Join(s.pendingDir(), id("b")+".json"))
	if results, size, err := s.Backlog(); err != nil || results != 2 || size != one.Size()+two.Size() {
		t.Fatalf("backlog %d %d %v", results, size, err)
	}
	if err := os.RemoveAll(s.dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Backlog(); err == nil {
		t.Fatal("a spool directory that is gone must be an error, not an empty spool")
	}
}

func TestFullSpoolRefusesNewResultsAndKeepsOldOnes(t *testing.T) {
	s, _ := Open(t.TempDir(), 600)
	if err := s.Put(sample("first")); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = s.Put(sample(string(rune('k' + i))))
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("want ErrFull, got %v", err)
	}
	entries, _ := s.Pending(100)
	if len(entries) == 0 || entries[0].ID != id("first") {
		t.Fatalf("old results lost: %v", entries)
	}
}

// failingFS fails one step of an atomic write, as a full disk would.
type failingFS struct {
	osFS
	failOn string
}

type failingFile struct {
	*os.File
	failOn string
}

func (f failingFS) CreateTemp(dir, pattern string) (File, error) {
	if f.failOn == "create" {
		return nil, &os.PathError{Op: "open", Path: dir, Err: syscall.ENOSPC}
	}
	file, err := os.CreateTemp(dir, pattern)
	return failingFile{file, f.failOn}, err
}

func (f failingFile) Write(p []byte) (int, error) {
	if f.failOn == "write" {
		n, _ := f.File.Write(p[:len(p)/2]) // a partial write, then the disk is full
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f failingFile) Sync() error {
	if f.failOn == "sync" {
		return syscall.EIO
	}
	return f.File.Sync()
}

func (f failingFS) Rename(oldpath, newpath string) error {
	if f.failOn == "rename" {
		return syscall.ENOSPC
	}
	return os.Rename(oldpath, newpath)
}

func TestFailedWritesLeaveNothingAndLoseNothing(t *testing.T) {
	for _, step := range []string{"create", "write", "sync", "rename"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := Open(dir, 0)
			if err := s.Put(sample("kept")); err != nil {
				t.Fatal(err)
			}
			s.WithFS(failingFS{failOn: step})
			if err := s.Put(sample("lost")); err == nil {
				t.Fatal("write should fail")
			}
			files, _ := os.ReadDir(filepath.Join(dir, "pending"))
			if len(files) != 1 || files[0].Name() != id("kept")+".json" {
				names := []string{}
				for _, f := range files {
					names = append(names, f.Name())
				}
				t.Fatalf("pending after failed %s: %v", step, names)
			}
		})
	}
}

func TestCorruptFilesAreQuarantinedNotBlocking(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	_ = os.WriteFile(filepath.Join(dir, "pending", "broken.json"), []byte("{half"), 0o600)
	_ = s.Put(sample("good"))
	entries, err := s.Pending(10)
	if err != nil || len(entries) != 1 || entries[0].ID != id("good") {
		t.Fatalf("%v %v", entries, err)
	}
	if _, rejected := s.Counts(); rejected != 1 {
		t.Fatal("corrupt file not quarantined")
	}
}

func TestServerIDsNeverBecomePathsOutsideTheSpool(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(root, "victim.json")
	if err := os.WriteFile(victim, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(filepath.Join(root, "spool"), 0)
	_ = s.Put(sample("kept"))
	crafted := []string{"../../victim", victim[:len(victim)-len(".json")], "../pending/x", ""}
	if err := s.Done(crafted); err == nil {
		t.Fatal("Done accepted ids that are not result ids")
	}
	if err := s.Reject(crafted); err == nil {
		t.Fatal("Reject accepted ids that are not result ids")
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("a file outside the spool was touched: %v", err)
	}
	if pending, rejected := s.Counts(); pending != 1 || rejected != 0 {
		t.Fatalf("pending %d rejected %d", pending, rejected)
	}
	bad := sample("x")
	bad.ID = "../escape"
	if err := s.Put(bad); err == nil {
		t.Fatal("Put stored a result whose id is a path")
	}
}

func TestAFileWhoseResultIDIsNotItsNameIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	other := sample("other")
	data, _ := json.Marshal(other)
	_ = os.WriteFile(filepath.Join(dir, "pending", id("name")+".json"), data, 0o600)
	if entries, err := s.Pending(10); err != nil || len(entries) != 0 {
		t.Fatalf("%v %v", entries, err)
	}
	if _, rejected := s.Counts(); rejected != 1 {
		t.Fatal("mismatched file not quarantined")
	}
}

func TestOpenRemovesStaleTemporaryFilesOnly(t *testing.T) {
	dir := t.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "pending"), 0o700)
	stale, fresh := filepath.Join(dir, "pending", ".tmp-1"), filepath.Join(dir, "pending", ".tmp-2")
	_ = os.WriteFile(stale, []byte("{ha"), 0o600)
	_ = os.WriteFile(fresh, []byte("{ha"), 0o600)
	old := time.Now().Add(-2 * StaleTempAge)
	_ = os.Chtimes(stale, old, old)
	if _, err := Open(dir, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("a stale temporary file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("a temporary file being written was removed")
	}
}
