package mcpadapter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// heldCallEnv is the test hub with an audit recorder, served by a server that hands
// the test each tools/call request's own context, and an upstream that holds each
// request until released (or until the hub gives it up).
type heldCallEnv struct {
	*env
	rows     *committedRows
	url      string
	arrived  chan struct{}
	release  chan struct{}
	serverCx chan context.Context
	version  string // the protocol version sessions negotiate; 2025-06-18 unless set
}

func newHeldCallEnv(t *testing.T) *heldCallEnv {
	t.Helper()
	h := &heldCallEnv{rows: &committedRows{}, arrived: make(chan struct{}, 4), release: make(chan struct{}), serverCx: make(chan context.Context, 4)}
	h.env = newEnvWith(t, nil, func(o *router.Options) { o.Audit = h.rows })
	h.onUpstream(func(r *http.Request) bool {
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done(): // the hub gave the request up
		}
		return false
	})
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Call") != "" {
			h.serverCx <- r.Context()
		}
		h.adapter.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/mcp/acme"
	return h
}

// post sends one message in the session (none for initialize) and returns the
// response; call marks a tools/call whose server context the test wants.
func (h *heldCallEnv) post(ctx context.Context, session, body string, call bool) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", h.protocolVersion())
	}
	if call {
		req.Header.Set("X-Test-Call", "1")
	}
	return http.DefaultClient.Do(req)
}

func (h *heldCallEnv) protocolVersion() string {
	if h.version != "" {
		return h.version
	}
	return "2025-06-18"
}

// session initializes a session and returns its id.
func (h *heldCallEnv) session(t *testing.T) string {
	t.Helper()
	resp, err := h.post(context.Background(), "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+h.protocolVersion()+`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize: HTTP %d and no session id", resp.StatusCode)
	}
	return id
}

// row waits for the call's audit row.
func (h *heldCallEnv) row(t *testing.T) audit.Event {
	t.Helper()
	var got audit.Event
	testwait.Until(t, "the call's audit row", func() bool {
		h.rows.mu.Lock()
		defer h.rows.mu.Unlock()
		for _, e := range h.rows.rows {
			if e.Tool == "notes_create_note" {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

const heldCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"kept"}}}`

// A client that drops its POST stream has not canceled its call (a disconnection is
// not a cancellation): the call runs to its end and its audit row says it succeeded.
func TestDroppedPostStreamDoesNotCancelTheCall(t *testing.T) {
	t.Parallel()
	h := newHeldCallEnv(t)
	session := h.session(t)

	ctx, drop := context.WithCancel(context.Background())
	sent := make(chan error, 1)
	go func() {
		resp, err := h.post(ctx, session, heldCall, true)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		sent <- err
	}()
	server := testwait.Recv(t, h.serverCx, "the call to reach the hub")
	testwait.Recv(t, h.arrived, "the call to reach the upstream")
	drop()
	testwait.Recv(t, server.Done(), "the hub to see the client drop the stream")
	testwait.Recv(t, sent, "the client's request to end")
	close(h.release)

	if row := h.row(t); row.Outcome != "ok" || row.UpstreamStatus != http.StatusCreated {
		t.Fatalf("audit row: outcome %q, upstream status %d; want ok and 201 (the call finished)", row.Outcome, row.UpstreamStatus)
	}
}

// After notifications/cancelled no answer for that request is written: the POST that
// carried it ends without a JSON-RPC response, and the row says canceled.
func TestNoAnswerAfterCancelled(t *testing.T) {
	t.Parallel()
	h := newHeldCallEnv(t)
	session := h.session(t)

	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := h.post(context.Background(), session, heldCall, true)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- answer{status: resp.StatusCode, body: string(b), err: err}
	}()
	testwait.Recv(t, h.serverCx, "the call to reach the hub")
	testwait.Recv(t, h.arrived, "the call to reach the upstream")

	resp, err := h.post(context.Background(), session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user stopped it"}}`, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: HTTP %d, want 202", resp.StatusCode)
	}

	got := testwait.Recv(t, answered, "the canceled call's POST to end")
	if got.err != nil {
		t.Fatal(got.err)
	}
	if strings.Contains(got.body, `"id":7`) || strings.Contains(got.body, `"jsonrpc"`) {
		t.Fatalf("the canceled call was answered (HTTP %d): %s", got.status, got.body)
	}
	if row := h.row(t); row.Outcome != "canceled" {
		t.Errorf("audit row outcome %q, want canceled", row.Outcome)
	}
}
