package mcpadapter

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
)

// postAs posts body to the tenant URL with key and header, and returns the status,
// the content type and the body.
func postAs(t *testing.T, e *env, key, body string, header map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestJSONRPCEnvelopeFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Each message goes in a live session, so no session rule refuses it first.
	inSession := map[string]string{"Mcp-Session-Id": initSession(t, e.srv.URL, "key-alice"), mcp.HeaderProtocolVersion: "2025-06-18"}
	init := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize"` + params + `}`
	}
	tests := []struct {
		name     string
		body     string
		wantCode int
		wantID   string // the id the error names
		wantText string
	}{
		{name: "a batch", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, wantCode: mcp.INVALID_REQUEST, wantID: "null", wantText: "batches are not supported"},
		{name: "an empty batch", body: `[]`, wantCode: mcp.INVALID_REQUEST, wantID: "null", wantText: "batches are not supported"},
		{name: "a method that is a number", body: `{"jsonrpc":"2.0","id":1,"method":5}`, wantCode: mcp.INVALID_REQUEST, wantID: "1", wantText: "method must be a string"},
		{name: "an id of null", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, wantCode: mcp.INVALID_REQUEST, wantID: "null", wantText: "id must be a string or a number"},
		{name: "an id that is an object", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, wantCode: mcp.INVALID_REQUEST, wantID: "null", wantText: "id must be a string or a number"},
		{name: "a bad jsonrpc version", body: `{"jsonrpc":"1.0","id":"a","method":"tools/list"}`, wantCode: mcp.INVALID_REQUEST, wantID: `"a"`, wantText: `jsonrpc must be "2.0"`},
		{name: "no method and no result", body: `{"jsonrpc":"2.0","id":3}`, wantCode: mcp.INVALID_REQUEST, wantID: "3", wantText: "needs a method"},
		{name: "a string", body: `"ping"`, wantCode: mcp.INVALID_REQUEST, wantID: "null", wantText: "one JSON-RPC message"},
		{name: "initialize without params", body: init(``), wantCode: mcp.INVALID_PARAMS, wantID: "1", wantText: "initialize needs params"},
		{name: "initialize with params null", body: init(`,"params":null`), wantCode: mcp.INVALID_PARAMS, wantID: "1", wantText: "initialize needs params"},
		{name: "initialize without protocolVersion", body: init(`,"params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"}}`), wantCode: mcp.INVALID_PARAMS, wantID: "1", wantText: "params.protocolVersion"},
		{name: "initialize without capabilities", body: init(`,"params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"t","version":"1"}}`), wantCode: mcp.INVALID_PARAMS, wantID: "1", wantText: "params.capabilities"},
		{name: "initialize without clientInfo", body: init(`,"params":{"protocolVersion":"2025-06-18","capabilities":{}}`), wantCode: mcp.INVALID_PARAMS, wantID: "1", wantText: "params.clientInfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := postAs(t, e, "key-alice", tt.body, inSession)
			var answer struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &answer); err != nil {
				t.Fatalf("status %d body %q: %v", status, body, err)
			}
			if status != http.StatusBadRequest || answer.JSONRPC != "2.0" || answer.Error.Code != tt.wantCode ||
				string(answer.ID) != tt.wantID || !strings.Contains(answer.Error.Message, tt.wantText) {
				t.Errorf("status %d body %s, want 400 with code %d, id %s and a message naming %q", status, body, tt.wantCode, tt.wantID, tt.wantText)
			}
		})
	}
}

// TestNotificationsGetNoJSONRPCBody checks that a refused notification gets only a
// status: JSON-RPC answers no notification.
func TestNotificationsGetNoJSONRPCBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	modern := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728}
	tests := []struct {
		name   string
		body   string
		header map[string]string
	}{
		{name: "a bad jsonrpc version", body: `{"jsonrpc":"1.0","method":"notifications/initialized"}`},
		{name: "a method that is a number", body: `{"jsonrpc":"2.0","method":7}`},
		{name: "no session id", body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, header: map[string]string{mcp.HeaderProtocolVersion: "2025-06-18"}},
		{name: "an unknown session id", body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
			header: map[string]string{mcp.HeaderProtocolVersion: "2025-06-18", "Mcp-Session-Id": "mcs_" + switchboard.RandomToken(24)}},
		{name: "2026-07-28 with a version the body contradicts", header: modern,
			body: `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-29"}}}`},
		{name: "2026-07-28 cancelled without a request id", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`, header: modern},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := postAs(t, e, "key-alice", tt.body, tt.header)
			if status < 400 || status >= 500 || strings.Contains(body, `"jsonrpc"`) {
				t.Errorf("status %d body %q, want a 4xx without a JSON-RPC body", status, body)
			}
		})
	}
}

// TestModernNotificationsNeedNoMeta sends 2026-07-28 notifications the way the Go
// SDK does: without params._meta, the version in the Mcp-Protocol-Version header
// only. They are accepted with 202 and an empty body, and a cancellation cancels the
// caller's own request, never another caller's with the same id.
func TestModernNotificationsNeedNoMeta(t *testing.T) {
	t.Parallel()
	carol := switchboard.Principal{TenantID: "ten_a", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_carol", KeyID: "key_c"}
	e := newEnvWith(t, func(o *Options) { o.Auth.(keys)["key-carol"] = carol })
	modern := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728}
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":{"trace":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing-runs","reason":"client is closing"}}`,
	} {
		if status, _, got := postAs(t, e, "key-alice", body, modern); status != http.StatusAccepted || got != "" {
			t.Errorf("%s: status %d body %q, want 202 and no body", body, status, got)
		}
	}

	// hold blocks the upstream's answer to a "slow" note until release closes or the
	// request is cancelled, which closes cancelled.
	hold := func(blocked, release, cancelled chan struct{}) {
		e.onUpstream(func(r *http.Request) bool {
			if !strings.Contains(readBody(r), "slow") {
				return false
			}
			close(blocked)
			select {
			case <-r.Context().Done():
				close(cancelled)
				return true
			case <-release:
				return false
			}
		})
	}
	call := func(id, text string) chan string {
		done := make(chan string, 1)
		go func() {
			body := `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"` + text + `"},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"go-sdk","version":"1.8.0"}}}}`
			_, _, got := postAs(t, e, "key-alice", body, map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728,
				mcp.HeaderMethod: "tools/call", mcp.HeaderName: "notes_create_note"})
			done <- got
		}()
		return done
	}
	wait := func(c <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(30 * time.Second):
			t.Fatal(what)
		}
	}
	cancelCall := func(key, id string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"client is closing"}}`
		if status, _, got := postAs(t, e, key, body, modern); status != http.StatusAccepted || got != "" {
			t.Errorf("cancel as %s: status %d body %q, want 202 and no body", key, status, got)
		}
	}

	// Carol's cancellation of the same id leaves alice's call running to its answer.
	blocked, release := make(chan struct{}), make(chan struct{})
	hold(blocked, release, make(chan struct{}))
	done := call("call-1", "slow")
	wait(blocked, "the call never reached the upstream")
	cancelCall("key-carol", "call-1")
	close(release)
	select {
	case got := <-done:
		if !strings.Contains(got, `"slow"`) || strings.Contains(got, `"isError":true`) {
			t.Errorf("alice's call after carol's cancellation = %s, want its output", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("alice's call never ended")
	}

	// Alice's own cancellation, without _meta, stops the upstream request.
	blocked, cancelled := make(chan struct{}), make(chan struct{})
	hold(blocked, make(chan struct{}), cancelled)
	done = call("call-2", "slow")
	wait(blocked, "the second call never reached the upstream")
	cancelCall("key-alice", "call-2")
	wait(cancelled, "notifications/cancelled without _meta did not cancel the upstream request")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call's HTTP request never ended")
	}
}
