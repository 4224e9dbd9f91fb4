package upload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/api"
	"github.com/fathom-net/fathom/agents/internal/clock"
	"github.com/fathom-net/fathom/agents/internal/result"
	"github.com/fathom-net/fathom/agents/internal/spool"
)

// fakeServer answers result batches the way docs/api.md says the real one does.
type fakeServer struct {
	mu      sync.Mutex
	status  int // 0: accept
	seen    map[string]bool
	batches int
	bad     string // refuse any batch carrying this result id...
	badCode int    // ...with this status (400 when 0)
	extra   string // also acknowledge this id, as a confused or hostile server might
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches++
	if f.status != 0 {
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, `{"detail":"refused"}`)
		return
	}
	var batch result.Batch
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	type item struct{ ID, Status string }
	out := struct {
		Results []item `json:"results"`
	}{}
	for _, res := range batch.Results {
		if res.ID == f.bad {
			w.WriteHeader(max(f.badCode, http.StatusBadRequest))
			_, _ = io.WriteString(w, `{"detail":"refused"}`)
			return
		}
	}
	if f.extra != "" {
		out.Results = append(out.Results, item{f.extra, "created"})
	}
	for _, res := range batch.Results {
		status := "created"
		if f.seen[res.ID] {
			status = "duplicate"
		}
		f.seen[res.ID] = true
		out.Results = append(out.Results, item{res.ID, status})
	}
	_ = json.NewEncoder(w).Encode(out)
}

func setup(t *testing.T, n int) (*Uploader, *spool.Spool, *fakeServer) {
	t.Helper()
	fake := &fakeServer{seen: map[string]bool{}}
	server := httptest.NewServer(fake)
	t.Cleanup(server.Close)
	base, _ := url.Parse(server.URL)
	s, err := spool.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := result.New("ping", "ping:b", "v1", "198.18.2.2", "", time.Date(2026, 11, 22, 12, 0, i, 0, time.UTC))
		r.Fail("test")
		if err := s.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	u := New(s, api.New(base, "a", "s", "test"), 2, log, func() time.Duration { return time.Hour })
	return u, s, fake
}

func TestOnceDeletesOnlyAcknowledgedResults(t *testing.T) {
	u, s, _ := setup(t, 3)
	sent, err := u.Once(context.Background())
	if err != nil || sent != 2 {
		t.Fatalf("sent %d %v", sent, err)
	}
	if pending, _ := s.Counts(); pending != 1 {
		t.Fatalf("pending %d, want 1", pending)
	}
}

func TestServerErrorsKeepEverythingSpooled(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		u, s, fake := setup(t, 3)
		fake.status = status
		if _, err := u.Once(context.Background()); !api.IsStatus(err, status) {
			t.Fatalf("%d: error %v", status, err)
		}
		if pending, rejected := s.Counts(); pending != 3 || rejected != 0 {
			t.Fatalf("%d: pending %d rejected %d: nothing may be lost", status, pending, rejected)
		}
	}
}

func TestMalformedBatchIsQuarantinedNotRetriedForever(t *testing.T) {
	u, s, fake := setup(t, 3)
	fake.status = http.StatusBadRequest
	if _, err := u.Once(context.Background()); err != ErrRejected {
		t.Fatalf("error %v", err)
	}
	if pending, rejected := s.Counts(); pending != 1 || rejected != 2 {
		t.Fatalf("pending %d rejected %d", pending, rejected)
	}
}

func TestOneRefusedResultIsQuarantinedAloneAndTheRestDelivered(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge} {
		u, s, fake := setup(t, 5)
		u.BatchSize = 5
		entries, _ := s.Pending(5)
		fake.bad, fake.badCode = entries[3].ID, status
		if status == http.StatusRequestEntityTooLarge {
			fake.bad = entries[0].ID // a single result over the server's body limit
		}
		sent, err := u.Once(context.Background())
		if err != ErrRejected || sent != 4 {
			t.Fatalf("%d: sent %d, error %v", status, sent, err)
		}
		if pending, rejected := s.Counts(); pending != 0 || rejected != 1 {
			t.Fatalf("%d: pending %d rejected %d: only the refused result may be quarantined", status, pending, rejected)
		}
		if len(fake.seen) != 4 {
			t.Fatalf("%d: server holds %d results, want 4", status, len(fake.seen))
		}
	}
}

func TestAnAnswerCannotDeleteResultsTheBatchDidNotCarry(t *testing.T) {
	u, s, fake := setup(t, 3) // batches of 2: the third stays pending
	entries, _ := s.Pending(3)
	fake.extra = entries[2].ID
	if sent, err := u.Once(context.Background()); err != nil || sent != 2 {
		t.Fatalf("sent %d %v", sent, err)
	}
	if pending, _ := s.Counts(); pending != 1 {
		t.Fatalf("pending %d: the answer deleted a result that was never sent", pending)
	}
}

func TestDrainUploadsEverythingAndRetriesAreDuplicates(t *testing.T) {
	u, s, fake := setup(t, 5)
	if err := u.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pending, _ := s.Counts(); pending != 0 || fake.batches != 3 {
		t.Fatalf("pending %d after %d batches", pending, fake.batches)
	}
	if len(fake.seen) != 5 {
		t.Fatalf("server saw %d distinct ids", len(fake.seen))
	}
}

func TestBackoffGrowsWithJitterAndCaps(t *testing.T) {
	minimum, maximum := 2*time.Second, 5*time.Minute
	b := time.Duration(0)
	for i := 0; i < 20; i++ {
		b = nextBackoff(b, minimum, maximum)
		if b < time.Duration(float64(minimum)*0.8) || b > time.Duration(float64(maximum)*1.2) {
			t.Fatalf("step %d: backoff %v outside bounds", i, b)
		}
	}
	if b < 4*time.Minute {
		t.Fatalf("backoff did not reach the cap: %v", b)
	}
}

// Batches stay within MaxBatchBytes, a result larger than that still goes (alone), and the
// drain delivers everything in as many batches as that takes.
func TestBatchesStayWithinTheirByteBudget(t *testing.T) {
	u, s, fake := setup(t, 6)
	u.BatchSize = 100
	entries, _ := s.Pending(100)
	u.MaxBatchBytes = entries[0].Size*2 + entries[0].Size/2 // two results fit, a third does not
	if sent, err := u.Once(context.Background()); err != nil || sent != 2 {
		t.Fatalf("sent %d %v, want 2 per batch", sent, err)
	}
	u.MaxBatchBytes = 1 // every result is over budget: each goes alone, none is held back
	if sent, err := u.Once(context.Background()); err != nil || sent != 1 {
		t.Fatalf("sent %d %v, want 1", sent, err)
	}
	u.MaxBatchBytes = DefaultMaxBatchBytes
	if err := u.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pending, rejected := s.Counts(); pending != 0 || rejected != 0 || fake.batches != 3 {
		t.Fatalf("pending %d rejected %d after %d batches", pending, rejected, fake.batches)
	}
}

// lockedBuffer collects log lines written from the uploader's goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// An hour of the uploader's time against a server that answers 503, in one real second, with
// new results kicking it all the while: it retries as the back-off says (2 s doubling to
// 5 min, +-20%), so 16 to 25 attempts, never once per kick; and it logs each wait.
func TestRunBacksOffToTheCapThroughAnHourOfErrorsWhateverTheKicks(t *testing.T) {
	u, _, fake := setup(t, 3)
	fake.status = http.StatusServiceUnavailable
	logs := &lockedBuffer{}
	u.Log = slog.New(slog.NewJSONHandler(logs, nil))
	u.Clock = clock.Scaled(3600)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); u.Run(ctx) }()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		u.Kick() // a new result every 18 s of the uploader's time
	}
	cancel()
	<-done

	fake.mu.Lock()
	attempts := fake.batches
	fake.mu.Unlock()
	t.Logf("%d attempts", attempts)
	// At most what the back-off allows in an hour (never once per kick); at least enough to
	// reach the cap, which the waits below check. A loaded machine runs fewer attempts in the
	// real second than an idle one (each is an HTTP round trip), never more.
	if attempts < 10 || attempts > 26 {
		t.Fatalf("%d upload attempts in an hour of errors, want 16..25 (10 allows for a slow machine)", attempts)
	}
	var waits []time.Duration
	scanner := bufio.NewScanner(bytes.NewReader(logs.buf.Bytes()))
	for scanner.Scan() {
		var line struct {
			Msg     string        `json:"msg"`
			RetryIn time.Duration `json:"retry_in"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &line); err == nil && line.RetryIn > 0 {
			waits = append(waits, line.RetryIn)
		}
	}
	// The cancel can cut the last attempt short after the server counted it and before its
	// wait was logged: one fewer wait than attempts, never more, never two fewer.
	if len(waits) != attempts && len(waits) != attempts-1 {
		t.Fatalf("%d attempts but %d logged waits", attempts, len(waits))
	}
	if first, last := waits[0], waits[len(waits)-1]; first > 3*time.Second || last < 4*time.Minute || last > 6*time.Minute {
		t.Fatalf("waits %v: want about 2 s first and the 5 min cap last", waits)
	}
}
