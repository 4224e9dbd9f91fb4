// Package api is the agent's one HTTP client for the Fathom server (docs/api.md).
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fathom-net/fathom/agents/internal/result"
)

// Error is a non-2xx answer, with the server's own explanation.
type Error struct {
	Status int
	Detail string
	Errors []BatchError
}

// BatchError is one problem the server found in a result batch.
type BatchError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("server answered %d", e.Status)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	for i, be := range e.Errors {
		if i == 5 {
			msg += fmt.Sprintf(" (and %d more)", len(e.Errors)-5)
			break
		}
		msg += fmt.Sprintf("; %s: %s", be.Path, be.Message)
	}
	return msg
}

// IsStatus reports whether err is an answer with this HTTP status.
func IsStatus(err error, status int) bool {
	var apiErr *Error
	return errors.As(err, &apiErr) && apiErr.Status == status
}

// Headers on every authenticated request, read by the server for the agent's metrics
// (docs/api.md): the agent's wall clock as it sends, from which the server reads how far
// the agent's clock is from its own (result timestamps and one-way figures rest on it), and
// what waits in its spool ("results=12, bytes=48211").
const (
	HeaderAgentTime = "Fathom-Agent-Time"
	HeaderSpool     = "Fathom-Spool"
)

// AgentTimeLayout is HeaderAgentTime's: RFC 3339 in UTC, to the microsecond.
const AgentTimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// Client talks to one server. HTTP is a field so tests can point it at httptest servers.
type Client struct {
	BaseURL    *url.URL
	AgentID    string
	Credential string
	UserAgent  string
	HTTP       *http.Client
	// Backlog, when set, says what waits in the spool (HeaderSpool); a failed read leaves
	// the header out. It reads the spool's directory, so it is asked at most every
	// backlogEvery, not before each of the uploads that drain a long backlog.
	Backlog func() (results int, bytes int64, err error)

	backlogMu   sync.Mutex
	backlogAt   time.Time
	backlogHead string // "" after a failed read
}

// backlogEvery is how stale the spool header may be: the server records it every 5 s.
const backlogEvery = 5 * time.Second

// spoolHeader is HeaderSpool's value, read again once backlogEvery has passed.
func (c *Client) spoolHeader() string {
	c.backlogMu.Lock()
	defer c.backlogMu.Unlock()
	if now := time.Now(); c.backlogAt.IsZero() || now.Sub(c.backlogAt) >= backlogEvery {
		c.backlogAt, c.backlogHead = now, ""
		if results, size, err := c.Backlog(); err == nil {
			c.backlogHead = fmt.Sprintf("results=%d, bytes=%d", results, size)
		}
	}
	return c.backlogHead
}

// CheckServerURL refuses plain HTTP except to loopback, or when explicitly allowed (a lab
// or a trusted management network): the credential travels in every request.
func CheckServerURL(raw string, allowInsecureHTTP bool) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("server URL %q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return u, nil
	case "http":
		host := u.Hostname()
		ip := net.ParseIP(host)
		if allowInsecureHTTP || host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return u, nil
		}
		return nil, fmt.Errorf("server URL %q uses plain http to a non-loopback host: use https (or allow_insecure_http for a lab)", raw)
	default:
		return nil, fmt.Errorf("server URL %q: scheme must be https or http", raw)
	}
}

// New builds a client with sane timeouts.
func New(base *url.URL, agentID, credential, version string) *Client {
	return &Client{
		BaseURL: base, AgentID: agentID, Credential: credential,
		UserAgent: "fathom-agent/" + version,
		HTTP:      &http.Client{Timeout: 30 * time.Second},
	}
}

func (c *Client) do(ctx context.Context, method, path string, body any, header http.Header, auth bool) (*http.Response, []byte, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL.String()+path, reader)
	if err != nil {
		return nil, nil, err
	}
	for key, values := range header {
		req.Header[key] = values
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.UserAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Agent "+c.AgentID+":"+c.Credential)
		if c.Backlog != nil {
			if head := c.spoolHeader(); head != "" {
				req.Header.Set(HeaderSpool, head)
			}
		}
		req.Header.Set(HeaderAgentTime, time.Now().UTC().Format(AgentTimeLayout))
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode >= 400 {
		apiErr := &Error{Status: resp.StatusCode}
		var parsed struct {
			Detail string       `json:"detail"`
			Errors []BatchError `json:"errors"`
		}
		if json.Unmarshal(data, &parsed) == nil {
			apiErr.Detail, apiErr.Errors = parsed.Detail, parsed.Errors
		} else {
			apiErr.Detail = strings.TrimSpace(string(data[:min(len(data), 200)]))
		}
		return resp, data, apiErr
	}
	return resp, data, nil
}

// EnrollRequest is the body of POST /agents/enroll/.
type EnrollRequest struct {
	Token   string `json:"token"`
	Name    string `json:"name"`
	Address string `json:"address"`
	// OtherAddresses are the agent's addresses in its other families (a dual-stack host's
	// IPv6 beside its IPv4): each family to each peer is a path of its own.
	OtherAddresses []string `json:"other_addresses,omitempty"`
	AgentVersion   string   `json:"agent_version"`
}

// EnrollResponse carries the credential, shown once.
type EnrollResponse struct {
	AgentID    string `json:"agent_id"`
	Name       string `json:"name"`
	Credential string `json:"credential"`
}

// Enroll exchanges a single-use token for a credential.
func (c *Client) Enroll(ctx context.Context, req EnrollRequest) (EnrollResponse, error) {
	var out EnrollResponse
	_, data, err := c.do(ctx, http.MethodPost, "/api/v1/agents/enroll/", req, nil, false)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(data, &out); err != nil || out.AgentID == "" || out.Credential == "" {
		return out, fmt.Errorf("unexpected enrolment answer: %s", data)
	}
	return out, nil
}

// Plan fetches the plan; notModified is true when the ETag still matches.
func (c *Client) Plan(ctx context.Context, etag string) (body []byte, newETag string, notModified bool, err error) {
	header := http.Header{}
	if etag != "" {
		header.Set("If-None-Match", etag)
	}
	resp, data, err := c.do(ctx, http.MethodGet, "/api/v1/agent/plan/", nil, header, true)
	if err != nil {
		return nil, "", false, err
	}
	if resp.StatusCode == http.StatusNotModified {
		return nil, etag, true, nil
	}
	return data, resp.Header.Get("ETag"), false, nil
}

// PutHostFacts reports host facts; changed says whether the server saw a change.
func (c *Client) PutHostFacts(ctx context.Context, facts any) (bool, error) {
	_, data, err := c.do(ctx, http.MethodPut, "/api/v1/agent/host-facts/", facts, nil, true)
	if err != nil {
		return false, err
	}
	var out struct {
		Changed bool `json:"changed"`
	}
	return out.Changed, json.Unmarshal(data, &out)
}

// ItemStatus is the server's verdict on one result of a batch.
type ItemStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// PostResults uploads a batch. A 400 means the batch breaks the contract and must not be
// retried as it is.
func (c *Client) PostResults(ctx context.Context, batch result.Batch) ([]ItemStatus, error) {
	_, data, err := c.do(ctx, http.MethodPost, "/api/v1/agent/results/", batch, nil, true)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []ItemStatus `json:"results"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("unexpected ingest answer: %w", err)
	}
	return out.Results, nil
}
