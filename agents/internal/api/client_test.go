package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/result"
)

func TestCheckServerURL(t *testing.T) {
	cases := []struct {
		raw      string
		insecure bool
		ok       bool
	}{
		{"https://fathom.example/", false, true},
		{"http://127.0.0.1:8000", false, true},
		{"http://localhost:8000", false, true},
		{"http://[::1]:8000", false, true},
		{"http://198.18.0.1:8000", false, false},
		{"http://198.18.0.1:8000", true, true},
		{"ftp://fathom.example", true, false},
		{"fathom.example", false, false},
		{"", false, false},
	}
	for _, tc := range cases {
		u, err := CheckServerURL(tc.raw, tc.insecure)
		if (err == nil) != tc.ok {
			t.Errorf("CheckServerURL(%q, %v) = %v, %v", tc.raw, tc.insecure, u, err)
		}
		if err == nil && strings.HasSuffix(u.String(), "/") {
			t.Errorf("trailing slash kept in %q", u)
		}
	}
}

func client(t *testing.T, handler http.HandlerFunc) *Client {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	base, _ := url.Parse(server.URL)
	c := New(base, "agent-1", "secret", "test")
	c.HTTP.Timeout = 5 * time.Second
	return c
}

func TestRequestsCarryTheAgentCredential(t *testing.T) {
	c := client(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Agent agent-1:secret" || r.Header.Get("User-Agent") != "fathom-agent/test" {
			http.Error(w, `{"detail":"bad auth"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("ETag", `"v2"`)
		_, _ = io.WriteString(w, `{"schema_version":1}`)
	})
	body, etag, notModified, err := c.Plan(context.Background(), "")
	if err != nil || notModified || etag != `"v2"` || string(body) != `{"schema_version":1}` {
		t.Fatalf("plan %q %q %v %v", body, etag, notModified, err)
	}
}

// Every authenticated request says the agent's time as it sent and what its spool holds; a
// spool that cannot be read leaves its header out rather than guessing.
func TestRequestsCarryTheAgentsClockAndSpool(t *testing.T) {
	var seen http.Header
	c := client(t, func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		_, _ = io.WriteString(w, `{"schema_version":1}`)
	})
	c.Backlog = func() (int, int64, error) { return 12, 48211, nil }
	before := time.Now()
	if _, _, _, err := c.Plan(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	sent, err := time.Parse(AgentTimeLayout, seen.Get(HeaderAgentTime))
	if err != nil || sent.Before(before.Add(-time.Microsecond)) || sent.After(time.Now()) || sent.Location() != time.UTC {
		t.Fatalf("%s %q: %v", HeaderAgentTime, seen.Get(HeaderAgentTime), err)
	}
	if got := seen.Get(HeaderSpool); got != "results=12, bytes=48211" {
		t.Fatalf("%s %q", HeaderSpool, got)
	}
	// Read once per backlogEvery: the next request reuses it.
	c.Backlog = func() (int, int64, error) { return 0, 0, errors.New("no spool directory") }
	if _, _, _, err := c.Plan(context.Background(), ""); err != nil || seen.Get(HeaderSpool) != "results=12, bytes=48211" {
		t.Fatalf("within %v: %v %q", backlogEvery, err, seen.Get(HeaderSpool))
	}
	c.backlogAt = time.Now().Add(-backlogEvery)
	if _, _, _, err := c.Plan(context.Background(), ""); err != nil || seen.Get(HeaderSpool) != "" || seen.Get(HeaderAgentTime) == "" {
		t.Fatalf("unreadable spool: %v %v", err, seen)
	}
}

func TestPlanNotModified(t *testing.T) {
	c := client(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		t.Errorf("If-None-Match not sent")
	})
	_, etag, notModified, err := c.Plan(context.Background(), `"v1"`)
	if err != nil || !notModified || etag != `"v1"` {
		t.Fatalf("304: %q %v %v", etag, notModified, err)
	}
}

func TestErrorsCarryTheServersExplanation(t *testing.T) {
	c := client(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"detail":"invalid batch","errors":[{"path":"results/0/samples","message":"too long"}]}`)
	})
	_, err := c.PostResults(context.Background(), result.Batch{SchemaVersion: 1})
	if !IsStatus(err, http.StatusBadRequest) {
		t.Fatalf("want a 400 error, got %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "invalid batch") || !strings.Contains(msg, "results/0/samples: too long") {
		t.Fatalf("message %q", msg)
	}
}

func TestNonJSONErrorBodyIsTruncated(t *testing.T) {
	c := client(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("x", 1000), http.StatusBadGateway)
	})
	_, err := c.PutHostFacts(context.Background(), map[string]string{})
	if !IsStatus(err, http.StatusBadGateway) || len(err.Error()) > 260 {
		t.Fatalf("error %v", err)
	}
}

func TestEnrollRefusesAnAnswerWithoutCredential(t *testing.T) {
	c := client(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("enrolment must not send a credential")
		}
		var req EnrollRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Token != "tok" {
			t.Errorf("request %+v %v", req, err)
		}
		_, _ = io.WriteString(w, `{"agent_id":"a"}`)
	})
	if _, err := c.Enroll(context.Background(), EnrollRequest{Token: "tok"}); err == nil {
		t.Fatal("an answer without a credential was accepted")
	}
}

func TestUnreachableServerIsAnError(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:1")
	c := New(base, "a", "s", "test")
	if _, err := c.PostResults(context.Background(), result.Batch{}); err == nil || IsStatus(err, 0) {
		t.Fatalf("error %v", err)
	}
}
