// Package spool keeps results on disk from the moment a run ends until the server has
// acknowledged them. Writes are atomic (temp file, fsync, rename), so a crash or a full disk
// never leaves a half-written result, and a byte cap keeps a long outage from filling the disk.
package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/fathom-net/fathom/agents/internal/result"
)

// ErrFull means the spool reached its byte cap; the new result was not stored.
var ErrFull = errors.New("spool full")

// FS is the part of the file system the spool writes through, so tests can make writes fail.
type FS interface {
	CreateTemp(dir, pattern string) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
}

// File is a temp file being written.
type File interface {
	Name() string
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }

// Spool is a directory of pending results plus a quarantine for refused ones.
type Spool struct {
	dir      string
	maxBytes int64
	fs       FS
	mu       sync.Mutex
}

// Entry is one pending result.
type Entry struct {
	ID     string
	Path   string
	Result result.Result
	// Size is the result's encoded size on disk, about what it adds to an upload.
	Size int
}

// StaleTempAge is how old a temporary file must be before Open removes it: a Put writes
// one for milliseconds, so an older one was left by a crash mid-write.
const StaleTempAge = 10 * time.Minute

// Open creates the spool directories (0700) under dir and removes stale temporary files.
func Open(dir string, maxBytes int64) (*Spool, error) {
	for _, sub := range []string{"pending", "rejected"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	s := &Spool{dir: dir, maxBytes: maxBytes, fs: osFS{}}
	stale, _ := filepath.Glob(filepath.Join(s.pendingDir(), ".tmp-*"))
	for _, name := range stale {
		if info, err := os.Stat(name); err == nil && time.Since(info.ModTime()) > StaleTempAge {
			_ = os.Remove(name)
		}
	}
	return s, nil
}

// ValidID reports whether id can name a spooled result: a canonical UUID, as result.New
// makes them. Anything else (a server's answer, a file's content) never becomes a path.
func ValidID(id string) bool {
	parsed, err := uuid.Parse(id)
	return err == nil && parsed.String() == id
}

// syncDir makes a rename in dir durable: without it a crash can forget the new name.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WithFS replaces the file system (tests).
func (s *Spool) WithFS(fsys FS) *Spool { s.fs = fsys; return s }

func (s *Spool) pendingDir() string  { return filepath.Join(s.dir, "pending") }
func (s *Spool) rejectedDir() string { return filepath.Join(s.dir, "rejected") }

// Put stores a result durably. On any error nothing is left behind and what was already
// spooled is untouched.
func (s *Spool) Put(r result.Result) error {
	if !ValidID(r.ID) {
		return fmt.Errorf("spool: result id %q is not a UUID", r.ID)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("spool: encode result %s: %w", r.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	used, err := dirBytes(s.pendingDir())
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if s.maxBytes > 0 && used+int64(len(data)) > s.maxBytes {
		return fmt.Errorf("%w: %d of %d bytes used, result %s dropped", ErrFull, used, s.maxBytes, r.ID)
	}
	tmp, err := s.fs.CreateTemp(s.pendingDir(), ".tmp-*")
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = s.fs.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("spool: write result %s: %w", r.ID, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("spool: sync result %s: %w", r.ID, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("spool: close result %s: %w", r.ID, err)
	}
	if err := s.fs.Rename(tmp.Name(), filepath.Join(s.pendingDir(), r.ID+".json")); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	committed = true
	if err := syncDir(s.pendingDir()); err != nil {
		return fmt.Errorf("spool: sync directory: %w", err)
	}
	return nil
}

// Pending returns up to limit results, oldest first. Unreadable files are quarantined
// rather than blocking the queue.
func (s *Spool) Pending(limit int) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := os.ReadDir(s.pendingDir())
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	type file struct {
		name string
		mod  time.Time
	}
	var candidates []file
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") {
			continue
		}
		info, err := f.Info()
		if err != nil {
			continue
		}
		candidates = append(candidates, file{f.Name(), info.ModTime()})
	}
	// Oldest first; files stamped in the same clock tick go in name order,
	// so the order never depends on the directory's.
	sort.Slice(candidates, func(i, j int) bool {
		if !candidates[i].mod.Equal(candidates[j].mod) {
			return candidates[i].mod.Before(candidates[j].mod)
		}
		return candidates[i].name < candidates[j].name
	})
	var entries []Entry
	for _, c := range candidates {
		if len(entries) >= limit {
			break
		}
		path := filepath.Join(s.pendingDir(), c.name)
		data, err := os.ReadFile(path)
		var r result.Result
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err == nil && r.ID != strings.TrimSuffix(c.name, ".json") {
			err = fmt.Errorf("result id %q in file %s", r.ID, c.name)
		}
		if err != nil {
			_ = os.Rename(path, filepath.Join(s.rejectedDir(), c.name))
			continue
		}
		entries = append(entries, Entry{ID: r.ID, Path: path, Result: r, Size: len(data)})
	}
	return entries, nil
}

// Done removes acknowledged results.
func (s *Spool) Done(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, id := range ids {
		if !ValidID(id) {
			errs = append(errs, fmt.Errorf("spool: not a result id: %q", id))
			continue
		}
		if err := os.Remove(filepath.Join(s.pendingDir(), id+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Reject moves results the server refused into the quarantine for a human to look at.
func (s *Spool) Reject(ids []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, id := range ids {
		if !ValidID(id) {
			errs = append(errs, fmt.Errorf("spool: not a result id: %q", id))
			continue
		}
		name := id + ".json"
		if err := os.Rename(filepath.Join(s.pendingDir(), name), filepath.Join(s.rejectedDir(), name)); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, syncDir(s.pendingDir()), syncDir(s.rejectedDir()))
	return errors.Join(errs...)
}

// Counts reports pending and rejected results.
func (s *Spool) Counts() (pending, rejected int) {
	count := func(dir string) int {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		return len(files)
	}
	return count(s.pendingDir()), count(s.rejectedDir())
}

// Backlog is what waits to be uploaded: the pending results and the bytes they take.
func (s *Spool) Backlog() (results int, bytes int64, err error) {
	files, err := os.ReadDir(s.pendingDir())
	if err != nil {
		return 0, 0, fmt.Errorf("spool: %w", err)
	}
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") {
			continue // a result still being written is not waiting yet
		}
		if info, err := f.Info(); err == nil {
			results++
			bytes += info.Size()
		}
	}
	return results, bytes, nil
}

func dirBytes(dir string) (int64, error) {
	files, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, f := range files {
		if info, err := f.Info(); err == nil && !f.IsDir() {
			total += info.Size()
		}
	}
	return total, nil
}
