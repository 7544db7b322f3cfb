package mcpadapter

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
)

// modernToolsList posts a tools/list of protocol 2026-07-28 to u and returns the
// tools as listed (raw JSON) and the next cursor.
func modernToolsList(t *testing.T, u, key, cursor string) ([]json.RawMessage, string) {
	t.Helper()
	params := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}}
	if cursor != "" {
		params["cursor"] = cursor
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
	status, answer := modernRequestAt(t, u, key, string(mcp.MethodToolsList), string(body))
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		var msg struct {
			Result *struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
			return msg.Result.Tools, msg.Result.NextCursor
		}
	}
	t.Fatalf("tools/list at %s answered %d %s, without a result", u, status, answer)
	return nil, ""
}

// TestConsoleServesTheAgentURL: the console, given the agent's principal by the REST
// API, lists exactly what the agent URL lists to the agent's key, and calls a tool the
// agent's confirm policy covers the way a client of that URL does: the question (the
// form the hub would send), then the person's decline (nothing runs) or accept (the
// call runs), each step in the audit. A session-based request is refused.
func TestConsoleServesTheAgentURL(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ag := &oneAgent{}
		var agentP switchboard.Principal
		e := newRunsEnvWith(t, db, ag, func(e *runsEnv) keys {
			ag.agent = &agents.Agent{ID: "agt_console", TenantID: e.ann.TenantID, Name: "console", CreatedBy: e.ann.UserID, Version: 1,
				Tools: []agents.Tool{
					{AgentID: "agt_console", Tool: "notes_delete_note", TenantID: e.ann.TenantID, ConnectionID: e.connA},
					{AgentID: "agt_console", Tool: "notes_get_note", TenantID: e.ann.TenantID, ConnectionID: e.connA},
				}}
			agentP = switchboard.Principal{TenantID: e.ann.TenantID, TenantSlug: e.ann.TenantSlug, Kind: switchboard.PrincipalAgent, UserID: e.ann.UserID, AgentID: "agt_console", KeyID: "key_console"}
			return keys{"key-console": agentP}
		})
		e.policy.set(agentP, router.ConfirmDestructive)
		consoleP := agentP
		consoleP.KeyID = ""
		console := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.adapter.ServeConsole(w, r, consoleP) }))
		t.Cleanup(console.Close)

		atURL, _ := modernToolsList(t, e.srv.URL+"/mcp/"+e.ann.TenantSlug+"/agents/agt_console", "key-console", "")
		inConsole, _ := modernToolsList(t, console.URL, "", "")
		var names []string
		for _, raw := range inConsole {
			var tool struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(raw, &tool)
			names = append(names, tool.Name)
		}
		if !slices.Contains(names, "notes_delete_note") || !slices.Contains(names, "notes_get_note") {
			t.Errorf("the console lists %q, want the agent's tools", names)
		}
		if diff := cmp.Diff(asStrings(atURL), asStrings(inConsole)); diff != "" {
			t.Errorf("the console's tools/list differs from the agent URL's (-url +console):\n%s", diff)
		}

		id := e.up.Put("precious")
		args := map[string]any{"id": id}
		asked := modernToolCall(t, console.URL, "", "notes_delete_note", args, nil, "")
		form := asked.InputRequests[confirmKey].Elicitation
		if asked.ResultType != mcp.ResultTypeInputRequired || asked.RequestState == "" || form == nil {
			t.Fatalf("a destructive call in the console answered %+v; want the confirmation form", asked)
		}
		if !strings.Contains(form.Message, "notes-"+e.ann.TenantSlug) || !strings.Contains(form.Message, id) {
			t.Errorf("the form says %q; want the account and the arguments", form.Message)
		}
		no := modernToolCall(t, console.URL, "", "notes_delete_note", args, confirmAnswer("decline", nil), asked.RequestState)
		if !no.IsError || !strings.Contains(text(no), "declined") || !e.up.Has(id) {
			t.Fatalf("the decline: isError %v %q, note kept %v", no.IsError, text(no), e.up.Has(id))
		}
		again := modernToolCall(t, console.URL, "", "notes_delete_note", args, nil, "")
		yes := modernToolCall(t, console.URL, "", "notes_delete_note", args, acceptAnswer, again.RequestState)
		if yes.IsError || e.up.Has(id) || e.deletes() != 1 {
			t.Fatalf("the accept: isError %v %q, note kept %v, %d DELETEs", yes.IsError, text(yes), e.up.Has(id), e.deletes())
		}
		want := []string{"confirmation_asked notes_delete_note", "confirmation_declined notes_delete_note", "confirmation_asked notes_delete_note", "confirmation_accepted notes_delete_note"}
		if got := e.audit.confirmations(); !slices.Equal(got, want) {
			t.Errorf("audit = %q, want %q", got, want)
		}

		resp, err := http.Post(console.URL, "application/json",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(answer), "2026-07-28") {
			t.Errorf("a session-based initialize in the console answered %d %s; want 400 naming the version", resp.StatusCode, answer)
		}
	})
}

// TestConsoleRefusesAUsersPrincipal: the console serves agents' URLs only.
func TestConsoleRefusesAUsersPrincipal(t *testing.T) {
	t.Parallel()
	e := newRunsEnv(t, testdb.SQLite(t))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`))
	e.adapter.ServeConsole(rec, req, e.ann)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a user's principal got %d %s, want 403", rec.Code, rec.Body)
	}
}

func asStrings(raws []json.RawMessage) []string {
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = string(r)
	}
	return out
}
