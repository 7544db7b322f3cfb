package mcpadapter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/limits"
)

// TestBodyReservedAfterAuthentication: a request without a valid key is answered
// before a byte of its body is read or counted; a caller's request that does not fit
// the body budget is refused with Retry-After (a tools/call as a tool error), and one
// that fits is served, its bytes given back after.
func TestBodyReservedAfterAuthentication(t *testing.T) {
	t.Parallel()
	budget := limits.NewBodyBudget(1<<20, 1<<20)
	e := newEnvWith(t, func(o *Options) { o.Bodies = budget })
	post := func(key string, body io.Reader, length int64, session string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp/acme", body)
		req.ContentLength = length
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		e.adapter.ServeHTTP(w, req)
		return w
	}

	for _, key := range []string{"", "key-nobody"} {
		trap := &trapBody{size: 1 << 20}
		w := post(key, trap, 1<<20, "")
		if w.Code != http.StatusUnauthorized || trap.read.Load() != 0 || budget.InUse() != 0 {
			t.Errorf("key %q: status %d, %d bytes read, %d reserved; want 401, nothing read or reserved", key, w.Code, trap.read.Load(), budget.InUse())
		}
	}

	// The budget held by another request: a tools/call is refused as a tool error.
	other := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
	other.ContentLength = 1 << 20
	release, err := budget.Reserve(httptest.NewRecorder(), other.WithContext(limits.WithSource(context.Background(), "192.0.2.9")))
	if err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`
	w := post("key-alice", strings.NewReader(call), int64(len(call)), "mcs_whatever")
	if w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), `"isError":true`) || !strings.Contains(w.Body.String(), "busy reading other large requests") {
		t.Errorf("a tools/call beyond the budget: %d, Retry-After %q: %s; want a tool error saying to retry", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	release()

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	w = post("key-alice", strings.NewReader(initialize), int64(len(initialize)), "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"serverInfo"`) {
		t.Errorf("initialize within the budget: %d %s", w.Code, w.Body)
	}
	if got := budget.InUse(); got != 0 {
		t.Errorf("reserved after the requests: %d, want 0", got)
	}
}
