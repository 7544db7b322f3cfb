package mcpadapter

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/sessions"
	"github.com/switchboard-hub/switchboard/tenants"
)

// outageAnswer is one answer of an MCP URL while the database does not answer.
type outageAnswer struct {
	status     int
	retryAfter string
	body       string
}

// postDuringOutage posts one MCP message, in session when session is not "".
func postDuringOutage(t *testing.T, base, key, session, body string) outageAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/mcp/acme", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return outageAnswer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
}

// wantRPCUnavailable checks a JSON-RPC error answer to request id 7: unavailable,
// retry in 5 s, in the body and in Retry-After.
func wantRPCUnavailable(t *testing.T, what string, got outageAnswer) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Message string `json:"message"`
			Data    struct {
				Code       string `json:"code"`
				RetryAfter int    `json:"retry_after_seconds"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got.body), &m); err != nil || got.status != http.StatusServiceUnavailable || got.retryAfter != "5" ||
		string(m.ID) != "7" || m.Error.Data.Code != "unavailable" || m.Error.Data.RetryAfter != 5 || !strings.Contains(m.Error.Message, "retry in 5 s") {
		t.Errorf("%s: %d Retry-After %q %s; want 503, Retry-After 5 and a JSON-RPC error to id 7 saying unavailable, retry in 5 s", what, got.status, got.retryAfter, got.body)
	}
}

// wantToolUnavailable checks a tool result answer to request id 7: isError, saying
// retry in 5 s, with Retry-After 5.
func wantToolUnavailable(t *testing.T, what string, got outageAnswer) {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got.body), &m); err != nil || got.status != http.StatusOK || got.retryAfter != "5" ||
		string(m.ID) != "7" || !m.Result.IsError || len(m.Result.Content) == 0 || !strings.Contains(m.Result.Content[0].Text, "retry in 5 s") {
		t.Errorf("%s: %d Retry-After %q %s; want 200, Retry-After 5 and a tool error to id 7 saying retry in 5 s", what, got.status, got.retryAfter, got.body)
	}
}

const (
	outageCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notes_last_note","arguments":{}}}`
	outageList = `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	outageInit = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
)

// TestSessionsDuringADatabaseOutage: sessions are rows in the database; while it does
// not answer, a request in a session, and an initialize, get a JSON-RPC error saying
// unavailable, retry in 5 s, with Retry-After, instead of "internal error".
func TestSessionsDuringADatabaseOutage(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	e := newEnvWith(t, func(o *Options) { o.Sessions = sessions.NewStore(db) })
	session := initSession(t, e.srv.URL, "key-alice")
	if err := database.Close(db); err != nil {
		t.Fatal(err)
	}
	wantRPCUnavailable(t, "tools/call in a session", postDuringOutage(t, e.srv.URL, "key-alice", session, outageCall))
	wantRPCUnavailable(t, "tools/list in a session", postDuringOutage(t, e.srv.URL, "key-alice", session, outageList))
	wantRPCUnavailable(t, "initialize", postDuringOutage(t, e.srv.URL, "key-alice", "", outageInit))
}

// TestKeysDuringADatabaseOutage: an API key not cached cannot be checked while the
// database does not answer: a tools/call gets a tool error saying nothing ran and to
// retry in 5 s, another request a JSON-RPC error saying so, each with Retry-After;
// never 500 "internal error" or unauthorized.
func TestKeysDuringADatabaseOutage(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	_, key, _, err := ts.Bootstrap(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(o *Options) { o.Auth = ts })
	if err := database.Close(db); err != nil {
		t.Fatal(err)
	}
	wantToolUnavailable(t, "tools/call", postDuringOutage(t, e.srv.URL, key, "", outageCall))
	wantRPCUnavailable(t, "tools/list", postDuringOutage(t, e.srv.URL, key, "", outageList))
	wantRPCUnavailable(t, "initialize", postDuringOutage(t, e.srv.URL, key, "", outageInit))
}
