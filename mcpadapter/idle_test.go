package mcpadapter

import (
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestIdleSessionsExpireAndScopesGo checks that once its sessions are idle for longer
// than the idle timeout, a scope is swept with its server and goroutines, and that a
// client coming back later gets a working scope again.
//
// It does not run in parallel: it counts the process's goroutines.
func TestIdleSessionsExpireAndScopesGo(t *testing.T) {
	e := newEnv(t)
	e.adapter.opts.IdleTimeout = 300 * time.Millisecond
	before := runtime.NumGoroutine()
	status, _, session := postSession(t, e, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %q", status, session)
	}
	postSession(t, e, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if status, body, _ := postSession(t, e, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusOK {
		t.Fatalf("ping in the session: %d %s", status, body)
	}
	// The session ids are stateless (any node accepts them; nothing is kept per id), and
	// mcp-go's sweeper frees a session's state after the idle timeout. What stays per
	// principal is the scope, which Sweep drops once idle, with its server's goroutines.
	time.Sleep(400 * time.Millisecond)
	e.adapter.Sweep(time.Now().Add(time.Second))
	e.adapter.mu.Lock()
	n := len(e.adapter.scopes)
	e.adapter.mu.Unlock()
	if n != 0 {
		t.Errorf("%d scopes left after the sweep", n)
	}
	http.DefaultClient.CloseIdleConnections() // the test's own keep-alive connections
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		t.Errorf("goroutines: %d before the session, %d after its scope was swept", before, got)
	}
	if status, body, _ := postSession(t, e, session, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); status != http.StatusOK {
		t.Errorf("ping after the sweep: %d %s", status, body)
	}
	e.adapter.Close(context.Background())
}
