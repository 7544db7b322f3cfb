package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// agentBody is an agent as the API answers it.
type agentBody struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Description       string `json:"description"`
	Instructions      string `json:"instructions"`
	Confirm           string `json:"confirm"`
	ToolMode          string `json:"tool_mode"`
	EffectiveConfirm  string `json:"effective_confirm"`
	EffectiveToolMode string `json:"effective_tool_mode"`
	RunTools          string `json:"run_tools"`
	EffectiveRunTools string `json:"effective_run_tools"`
	Tools             []struct {
		Tool         string `json:"tool"`
		ConnectionID string `json:"connection_id"`
		Provider     string `json:"provider"`
		ReadOnly     bool   `json:"read_only"`
		Destructive  bool   `json:"destructive"`
		// ConnectionMissing says the bound connection was disconnected.
		ConnectionMissing bool `json:"connection_missing"`
	} `json:"tools"`
	MCPURL    string `json:"mcp_url"`
	CreatedBy string `json:"created_by"`
	UpdatedBy string `json:"updated_by"`
	Version   int64  `json:"version"`
}

func agentJSON(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAgentsLifecycle(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)

		var created agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
			"name": "Triage", "description": "Sorts issues", "instructions": "Label every new issue.",
			"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}, {"tool": "github_create_issue", "connection_id": conn}},
		}), http.StatusCreated, &created)
		if created.ID == "" || created.Version != 1 || created.CreatedBy != w.admin.userID {
			t.Fatalf("created %+v", created)
		}
		if want := "https://hub.example.com/mcp/" + w.a.Slug + "/agents/" + created.ID; created.MCPURL != want {
			t.Errorf("mcp_url = %q, want %q", created.MCPURL, want)
		}
		// An agent inherits the tenant's policies until it sets its own.
		if created.Confirm != "" || created.EffectiveConfirm != "never" || created.ToolMode != "" || created.EffectiveToolMode != "all" {
			t.Errorf("policies = %q/%q %q/%q, want inherited never and all", created.Confirm, created.EffectiveConfirm, created.ToolMode, created.EffectiveToolMode)
		}
		var tools []string
		for _, tl := range created.Tools {
			tools = append(tools, fmt.Sprintf("%s@%s read_only=%t", tl.Tool, tl.ConnectionID, tl.ReadOnly))
		}
		if diff := cmp.Diff([]string{"github_get_issue@" + conn + " read_only=true", "github_create_issue@" + conn + " read_only=false"}, tools); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}

		// The tenant's settings change what the agent inherits.
		w.want(w.admin, http.MethodPut, "/api/mcp-settings", `{"confirm":"destructive","tool_mode":"search","run_tools":"off"}`, http.StatusOK, nil)
		var got agentBody
		w.want(w.member, http.MethodGet, "/api/agents/"+created.ID, "", http.StatusOK, &got)
		if got.EffectiveConfirm != "destructive" || got.EffectiveToolMode != "search" || got.RunTools != "" || got.EffectiveRunTools != "off" {
			t.Errorf("after the tenant's change: %q %q %q %q, want destructive search, inherited run tools off",
				got.EffectiveConfirm, got.EffectiveToolMode, got.RunTools, got.EffectiveRunTools)
		}

		var updated agentBody
		w.want(w.admin, http.MethodPut, "/api/agents/"+created.ID, agentJSON(t, map[string]any{
			"name": "Triage", "instructions": "Only read.", "confirm": "always", "tool_mode": "all", "run_tools": "on", "version": 1,
			"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}},
		}), http.StatusOK, &updated)
		if updated.Version != 2 || len(updated.Tools) != 1 || updated.EffectiveConfirm != "always" || updated.EffectiveToolMode != "all" ||
			updated.RunTools != "on" || updated.EffectiveRunTools != "on" {
			t.Errorf("updated %+v", updated)
		}
		t.Run("a stale version is a conflict", func(t *testing.T) {
			_, b := w.do(w.admin, http.MethodPut, "/api/agents/"+created.ID, agentJSON(t, map[string]any{"name": "Triage", "version": 1}))
			if e := decodeError(t, b); e.Error.Code != "conflict" {
				t.Errorf("error %+v, want conflict", e)
			}
		})
		t.Run("a member may read but not change the owner's agent", func(t *testing.T) {
			_, b := w.do(w.member, http.MethodDelete, "/api/agents/"+created.ID, "")
			if e := decodeError(t, b); e.Error.Code != "forbidden" {
				t.Errorf("error %+v, want forbidden", e)
			}
		})

		var key struct {
			Key     string `json:"key"`
			AgentID string `json:"agent_id"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents/"+created.ID+"/keys", `{"name":"claude"}`, http.StatusCreated, &key)
		if key.Key == "" || key.AgentID != created.ID {
			t.Fatalf("agent key %+v", key)
		}
		agentKey := actor{key: key.Key, userID: w.admin.userID, tenant: w.a.ID}
		t.Run("an agent's key reads its own agent and manages nothing", func(t *testing.T) {
			w.want(agentKey, http.MethodGet, "/api/agents/"+created.ID, "", http.StatusOK, nil)
			var list struct {
				Agents []agentBody `json:"agents"`
			}
			w.want(agentKey, http.MethodGet, "/api/agents", "", http.StatusOK, &list)
			if len(list.Agents) != 1 || list.Agents[0].ID != created.ID {
				t.Errorf("agent key lists %+v", list.Agents)
			}
			for _, req := range []struct{ method, path, body string }{
				{http.MethodPost, "/api/agents", `{"name":"x"}`},
				{http.MethodDelete, "/api/agents/" + created.ID, ""},
				{http.MethodPost, "/api/agents/" + created.ID + "/keys", `{"name":"more"}`},
				// The creator's connections are not the agent's to read or change.
				{http.MethodGet, "/api/connections", ""},
				{http.MethodGet, "/api/connections/" + conn, ""},
				{http.MethodPost, "/api/connections", `{"provider":"github","token":"ghp_x"}`},
				{http.MethodDelete, "/api/connections/" + conn, ""},
				{http.MethodPost, "/api/remote-mcp", `{"name":"x","url":"https://mcp.example.com/mcp"}`},
				{http.MethodPost, "/api/keys", `{"name":"escalate"}`},
			} {
				if status, b := w.do(agentKey, req.method, req.path, req.body); status != http.StatusForbidden {
					t.Errorf("%s %s with an agent key: %d %s, want 403", req.method, req.path, status, b)
				}
			}
		})
		var keys struct {
			Keys []struct {
				AgentID   string  `json:"agent_id"`
				RevokedAt *string `json:"revoked_at"`
			} `json:"keys"`
		}
		w.want(w.admin, http.MethodGet, "/api/agents/"+created.ID+"/keys", "", http.StatusOK, &keys)
		if len(keys.Keys) != 1 || keys.Keys[0].AgentID != created.ID {
			t.Errorf("agent keys %+v", keys.Keys)
		}

		w.want(w.admin, http.MethodDelete, "/api/agents/"+created.ID, "", http.StatusNoContent, nil)
		w.want(w.admin, http.MethodGet, "/api/agents/"+created.ID, "", http.StatusNotFound, nil)
		if status, _ := w.do(agentKey, http.MethodGet, "/api/agents", ""); status != http.StatusUnauthorized {
			t.Errorf("the deleted agent's key still works: %d", status)
		}
	})
}

func TestAgentValidation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		shared := w.connect(w.admin, goodToken, true)
		private := w.connect(w.admin, otherToken, false)
		bConn := w.connect(w.ownerB, otherToken, true)
		w.want(w.admin, http.MethodPost, "/api/agents", `{"name":"Taken"}`, http.StatusCreated, nil)

		tool := func(name, conn string) []map[string]string {
			return []map[string]string{{"tool": name, "connection_id": conn}}
		}
		tests := []struct {
			name   string
			who    actor
			body   map[string]any
			code   string
			field  string
			status int
		}{
			{name: "no name", who: w.admin, body: map[string]any{"name": " "}, code: "invalid", field: "name", status: 400},
			{name: "name taken", who: w.admin, body: map[string]any{"name": "Taken"}, code: "conflict", field: "name", status: 409},
			{name: "bad confirm", who: w.admin, body: map[string]any{"name": "a", "confirm": "sometimes"}, code: "invalid", field: "confirm", status: 400},
			{name: "bad tool mode", who: w.admin, body: map[string]any{"name": "a", "tool_mode": "few"}, code: "invalid", field: "tool_mode", status: 400},
			{name: "bad run tools", who: w.admin, body: map[string]any{"name": "a", "run_tools": "sometimes"}, code: "invalid", field: "run_tools", status: 400},
			{name: "unknown tool", who: w.admin, body: map[string]any{"name": "a", "tools": tool("github_fly", shared)}, code: "invalid", field: "tools[0].tool", status: 400},
			{name: "tool without connection, of a provider not connected with OAuth", who: w.admin, body: map[string]any{"name": "a", "tools": tool("airtable_list_bases", "")}, code: "invalid", field: "tools[0].connection_id", status: 400},
			{name: "another tenant's connection", who: w.admin, body: map[string]any{"name": "a", "tools": tool("github_get_issue", bConn)}, code: "invalid", field: "tools[0].connection_id", status: 400},
			{name: "a connection the creator may not use", who: w.member, body: map[string]any{"name": "a", "tools": tool("github_get_issue", private)}, code: "invalid", field: "tools[0].connection_id", status: 400},
			{name: "a connection of another provider", who: w.admin, body: map[string]any{"name": "a", "tools": tool("slack_post_message", shared)}, code: "invalid", field: "tools[0].connection_id", status: 400},
			{name: "the same tool twice", who: w.admin, body: map[string]any{"name": "a", "tools": append(tool("github_get_issue", shared), tool("github_get_issue", private)...)}, code: "invalid", field: "tools[1].tool", status: 400},
			{name: "unknown field", who: w.admin, body: map[string]any{"name": "a", "colour": "red"}, code: "invalid", field: "colour", status: 400},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, b := w.do(tt.who, http.MethodPost, "/api/agents", agentJSON(t, tt.body))
				e := decodeError(t, b)
				if status != tt.status || e.Error.Code != tt.code || e.Error.Field != tt.field {
					t.Errorf("got %d %s %q (%s), want %d %s %q", status, e.Error.Code, e.Error.Field, e.Error.Message, tt.status, tt.code, tt.field)
				}
			})
		}
		var list struct {
			Agents []agentBody `json:"agents"`
		}
		w.want(w.admin, http.MethodGet, "/api/agents", "", http.StatusOK, &list)
		if len(list.Agents) != 1 {
			t.Errorf("refused requests created agents: %+v", list.Agents)
		}
		t.Run("only admins change the tenant's MCP settings", func(t *testing.T) {
			status, b := w.do(w.member, http.MethodPut, "/api/mcp-settings", `{"confirm":"always","tool_mode":"all"}`)
			if status != http.StatusForbidden {
				t.Errorf("member: %d %s", status, b)
			}
			_, b = w.do(w.admin, http.MethodPut, "/api/mcp-settings", `{"confirm":"","tool_mode":"all"}`)
			if e := decodeError(t, b); e.Error.Field != "confirm" {
				t.Errorf("empty confirm: %+v", e)
			}
			_, b = w.do(w.admin, http.MethodPut, "/api/mcp-settings", `{"confirm":"never","tool_mode":"all","run_tools":"maybe"}`)
			if e := decodeError(t, b); e.Error.Field != "run_tools" {
				t.Errorf("bad run_tools: %+v", e)
			}
		})
	})
}

func TestAgentsCrossTenant(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		var a agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
			"name": "Secret", "tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}},
		}), http.StatusCreated, &a)
		missing := "agt_doesnotexist00000000000000"
		reqs := []struct {
			name, method, suffix, body string
		}{
			{name: "get", method: http.MethodGet},
			{name: "replace", method: http.MethodPut, body: `{"name":"Mine now","version":1}`},
			{name: "delete", method: http.MethodDelete},
			{name: "list keys", method: http.MethodGet, suffix: "/keys"},
			{name: "mint a key", method: http.MethodPost, suffix: "/keys", body: `{"name":"steal"}`},
		}
		for _, r := range reqs {
			t.Run(r.name, func(t *testing.T) {
				s1, other := w.do(w.ownerB, r.method, "/api/agents/"+a.ID+r.suffix, r.body)
				s2, none := w.do(w.ownerB, r.method, "/api/agents/"+missing+r.suffix, r.body)
				if s1 != http.StatusNotFound || s2 != http.StatusNotFound {
					t.Fatalf("statuses %d and %d, want 404 both", s1, s2)
				}
				if diff := cmp.Diff(string(none), string(other)); diff != "" {
					t.Errorf("another tenant's agent answers differently from a missing one (-missing +other):\n%s", diff)
				}
			})
		}
		var list struct {
			Agents []agentBody `json:"agents"`
		}
		w.want(w.ownerB, http.MethodGet, "/api/agents", "", http.StatusOK, &list)
		if len(list.Agents) != 0 {
			t.Errorf("B lists A's agents: %+v", list.Agents)
		}
		var still agentBody
		w.want(w.admin, http.MethodGet, "/api/agents/"+a.ID, "", http.StatusOK, &still)
		if still.Name != "Secret" || still.Version != 1 {
			t.Errorf("B's requests changed A's agent: %+v", still)
		}
	})
}

func TestAgentKeyCallsOnlyItsTools(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		other := w.connect(w.admin, otherToken, true)
		var a agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
			"name": "Reader", "tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}},
		}), http.StatusCreated, &a)
		var key struct {
			Key string `json:"key"`
		}
		w.want(w.admin, http.MethodPost, "/api/agents/"+a.ID+"/keys", `{"name":"reader"}`, http.StatusCreated, &key)
		agent := actor{key: key.Key, userID: w.admin.userID, tenant: w.a.ID}

		var tools struct {
			Tools []struct {
				Tool        string `json:"tool"`
				Connections []struct {
					ID string `json:"id"`
				} `json:"connections"`
			} `json:"tools"`
		}
		w.want(agent, http.MethodGet, "/api/tools", "", http.StatusOK, &tools)
		// The run tools, which every caller has, run on no connection.
		tools.Tools = slices.DeleteFunc(tools.Tools, func(tl struct {
			Tool        string `json:"tool"`
			Connections []struct {
				ID string `json:"id"`
			} `json:"connections"`
		}) bool {
			return len(tl.Connections) == 0
		})
		if len(tools.Tools) != 1 || tools.Tools[0].Tool != "github_get_issue" || len(tools.Tools[0].Connections) != 1 || tools.Tools[0].Connections[0].ID != conn {
			t.Errorf("the agent's key lists %+v, want github_get_issue on %s only", tools.Tools, conn)
		}
		var res struct {
			ConnectionID string `json:"connection_id"`
		}
		w.want(agent, http.MethodPost, "/api/tools/github_get_issue/call", `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusOK, &res)
		if res.ConnectionID != conn {
			t.Errorf("the agent's call ran on %s, want %s", res.ConnectionID, conn)
		}
		// Tool search over REST searches and calls the agent's tools only.
		var found struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		w.want(agent, http.MethodPost, "/api/tools/search_tools/call", `{"arguments":{"query":"issue"}}`, http.StatusOK, &found)
		if len(found.Result.Tools) == 0 || found.Result.Tools[0].Name != "github_get_issue" {
			t.Errorf("the agent's search found %+v, want github_get_issue first", found.Result.Tools)
		}
		for _, tl := range found.Result.Tools[1:] {
			if strings.HasPrefix(tl.Name, "github_") {
				t.Errorf("the agent's search found %s, which it did not select", tl.Name)
			}
		}
		var called struct {
			Result struct {
				Title string `json:"title"`
			} `json:"result"`
		}
		w.want(agent, http.MethodPost, "/api/tools/call_tool/call", `{"arguments":{"name":"github_get_issue","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}}`, http.StatusOK, &called)
		if called.Result.Title == "" {
			t.Errorf("call_tool answered %+v, want the issue", called)
		}
		refused := []struct {
			name, path, body string
			status           int
		}{
			{name: "call_tool of a tool the agent did not select", path: "/api/tools/call_tool/call", body: `{"arguments":{"name":"github_create_issue","arguments":{"owner":"o","repo":"r","title":"t"}}}`, status: http.StatusBadRequest},
			{name: "a tool the agent did not select", path: "/api/tools/github_create_issue/call", body: `{"arguments":{"owner":"o","repo":"r","title":"t"}}`, status: http.StatusNotFound},
			{name: "its tool on another connection", path: "/api/tools/github_get_issue/call", body: `{"connection_id":"` + other + `","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, status: http.StatusBadRequest},
			{name: "a run of a tool the agent did not select", path: "/api/runs", body: `{"tool":"github_create_issue","arguments":{"owner":"o","repo":"r","title":"t"}}`, status: http.StatusNotFound},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				if status, b := w.do(agent, http.MethodPost, tt.path, tt.body); status != tt.status {
					t.Errorf("status %d %s, want %d", status, b, tt.status)
				}
			})
		}
		for _, r := range w.github.requests() {
			if strings.Contains(r, "/repos/") && (strings.Contains(r, "POST") || strings.Contains(r, otherToken)) {
				t.Errorf("a refused call reached GitHub: %s", r)
			}
		}
	})
}
