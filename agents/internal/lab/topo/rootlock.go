package topo

import (
	"log/slog"
	"os"
	"syscall"
)

// RootLockEnv names the lock file that serialises the lab's changes to the root namespace's
// interfaces and addresses (its TUN devices are made there, its management bridge lives
// there) with programs that must not see them. Chromium aborts every request in flight with
// net::ERR_NETWORK_CHANGED when the root namespace's addresses change, so the browser tests
// hold this lock shared while a page loads (tests/system/conftest.py) and a lab coming up or
// going down waits for them (CI of 344c95f: a system-lab scenario starting beside a browser
// check in the stack lane failed that page's 14 requests).
const RootLockEnv = "FATHOM_LAB_ROOT_LOCK"

// DefaultRootLock is the lock file when RootLockEnv is unset.
const DefaultRootLock = "/run/lock/fathom-lab-root.lock"

// RootLockPath is the lock file in use.
func RootLockPath() string {
	if path := os.Getenv(RootLockEnv); path != "" {
		return path
	}
	return DefaultRootLock
}

// holdRootChanges takes the root-change lock exclusively and returns its release. A lock
// that cannot be taken (no such directory, no permission) is logged and not waited for: the
// lab must come up without it, only a browser beside it may then see a change.
func holdRootChanges(log *slog.Logger) func() {
	path := RootLockPath()
	file, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		log.Warn("root-change lock not taken", "path", path, "error", err)
		return func() {}
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX); err != nil {
		log.Warn("root-change lock not taken", "path", path, "error", err)
		_ = file.Close()
		return func() {}
	}
	return func() { _ = file.Close() } // closing the file releases the lock
}
