package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// fuzzAdapter is an adapter serving the notes provider to alice, with an upstream that
// answers every call.
func fuzzAdapter(tb testing.TB) *Adapter {
	tb.Helper()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(noteOut{ID: 7, Text: "ok"})
	}))
	tb.Cleanup(upstream.Close)
	reg := providers.NewRegistry()
	if err := reg.Register(notesSpec()); err != nil {
		tb.Fatal(err)
	}
	_ = reg.SetBaseURL("notes", upstream.URL)
	conns := &memConns{}
	conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "alice@notes", Status: connections.StatusActive})
	a := New(Options{Router: router.New(router.Options{Registry: reg, Connections: conns}), Auth: keys{"key-alice": alice}, PublicURL: "https://hub.test"})
	tb.Cleanup(func() { a.Close(context.Background()) })
	return a
}

// post sends body to alice's MCP URL and returns the answer.
func fuzzPost(a *Adapter, session, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mcp/acme", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	return rec
}

// FuzzJSONRPCBody: whatever body a key holder posts to an MCP URL, in a session or
// not, the answer is never a 5xx (nor a panic).
func FuzzJSONRPCBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notes_create_note","arguments":"x"}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"1.0","id":null}`,
		`{`,
		``,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	a := fuzzAdapter(f)
	init := fuzzPost(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`)
	session := init.Header().Get("Mcp-Session-Id")
	if session == "" {
		f.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	fuzzPost(a, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	f.Fuzz(func(t *testing.T, body string, inSession bool) {
		s := ""
		if inSession {
			s = session
		}
		if rec := fuzzPost(a, s, body); rec.Code >= 500 {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
		}
	})
}

// FuzzTakeConnection: the connection argument is taken off any arguments without a
// panic; a success names one of the tool's connections and leaves no connection
// argument, and a failure is an invalid error naming arguments or connection.
func FuzzTakeConnection(f *testing.F) {
	refs := []router.ConnectionRef{
		{ID: "con_1", Label: "Work", Account: "acme"},
		{ID: "con_2", Label: "Home", Account: "acme"},
		{ID: "con_3", Label: "con_1", Account: "other"},
	}
	conns := router.NewConnectionIndex(refs)
	for _, s := range []string{`{"connection":"Work","text":"x"}`, `{"connection":"con_2"}`, `{"connection":"acme"}`, `{"connection":7}`, `{}`, `[]`, `null`, `{"connection":"con_1","connection":"Home"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		rest, id, err := takeConnection(args, conns)
		if err != nil {
			e := switchboard.AsError(err)
			if e.Code != switchboard.CodeInvalid || (e.Field != "arguments" && e.Field != connectionArg) {
				t.Fatalf("takeConnection(%q) = %v, want an invalid error naming arguments or connection", args, err)
			}
			return
		}
		known := false
		for _, r := range refs {
			known = known || r.ID == id
		}
		var m map[string]json.RawMessage
		if !known || json.Unmarshal(rest, &m) != nil {
			t.Fatalf("takeConnection(%q) = %q, %s: not one of the tool's connections, or the rest is not an object", args, id, rest)
		}
		if _, ok := m[connectionArg]; ok {
			t.Fatalf("takeConnection(%q) left the connection argument in %s", args, rest)
		}
	})
}
