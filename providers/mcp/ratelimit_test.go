package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// TestRemote429BlocksTheConnection: a server that answers a tool call with 429 and
// Retry-After blocks its connection; the next call is refused as rate limited, with
// the time to wait, without reaching the server.
func TestRemote429BlocksTheConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newRig(t, db)
		up := newMCPServer(t, "")
		var limiting atomic.Bool
		var calls atomic.Int32 // tools/call requests that reached the server
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"tools/call"`) {
				calls.Add(1)
				if limiting.Load() {
					w.Header().Set("Retry-After", "120")
					http.Error(w, "too many requests", http.StatusTooManyRequests)
					return
				}
			}
			up.http.Config.Handler.ServeHTTP(w, req)
		}))
		t.Cleanup(func() { testwait.CloseServer(t, front) })

		reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: front.URL + "/mcp", Auth: "none"})
		if err != nil {
			t.Fatalf("register: %v", err)
		}
		call := router.Request{Tool: "up_shout", ConnectionID: reg.Connection.ID, Args: json.RawMessage(`{"word":"hey"}`)}
		if _, err := r.router.Execute(ctx, r.a, call); err != nil {
			t.Fatalf("first call: %v", err)
		}
		limiting.Store(true)
		_, err = r.router.Execute(ctx, r.a, call)
		if switchboard.CodeOf(err) != switchboard.CodeRateLimited {
			t.Fatalf("call answered 429 = %v, want rate_limited", err)
		}
		before := calls.Load()
		_, err = r.router.Execute(ctx, r.a, call)
		var ue *providers.UpstreamError
		if !errors.As(err, &ue) || ue.Code != switchboard.CodeRateLimited || ue.RetryAfter <= 60*time.Second || !strings.Contains(ue.Message, "nothing was sent") {
			t.Fatalf("call after the 429 = %v, want rate_limited by the connection's limit, with the time left of Retry-After 120", err)
		}
		if got := calls.Load(); got != before {
			t.Errorf("the call after the 429 reached the server (%d tool calls, want %d)", got, before)
		}
	})
}
