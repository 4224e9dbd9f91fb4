package topo

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A lab's root-namespace change waits for a browser test holding the lock shared, and takes
// the lock once it is released.
func TestRootChangesWaitForASharedHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "root.lock")
	t.Setenv(RootLockEnv, path)
	shared, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(shared.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	taken := make(chan func())
	go func() { taken <- holdRootChanges(log) }()
	select {
	case <-taken:
		t.Fatal("the root-change lock was taken while a browser test held it")
	case <-time.After(200 * time.Millisecond):
	}
	shared.Close()
	select {
	case release := <-taken:
		release()
	case <-time.After(5 * time.Second):
		t.Fatal("the root-change lock was not taken after the browser test let go")
	}
	// Released, a shared holder gets it again at once.
	again, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := syscall.Flock(int(again.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		t.Fatalf("the lock is still held after its release: %v", err)
	}
}

// A lock file that cannot be made is no reason for the lab not to come up.
func TestAnUnusableRootLockIsNotWaitedFor(t *testing.T) {
	t.Setenv(RootLockEnv, filepath.Join(t.TempDir(), "missing", "root.lock"))
	done := make(chan struct{})
	go func() {
		holdRootChanges(slog.New(slog.NewTextHandler(io.Discard, nil)))()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("an unusable lock file was waited for")
	}
}
