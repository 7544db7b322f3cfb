package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// boundAgent creates an agent with github_get_issue bound to conn and a key of it.
func boundAgent(t *testing.T, w *world, conn string) (agentBody, actor) {
	t.Helper()
	var a agentBody
	w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
		"name": "Reader", "tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}},
	}), http.StatusCreated, &a)
	var key struct {
		Key string `json:"key"`
	}
	w.want(w.admin, http.MethodPost, "/api/agents/"+a.ID+"/keys", `{"name":"reader"}`, http.StatusCreated, &key)
	return a, actor{key: key.Key, userID: w.admin.userID, tenant: w.a.ID}
}

// TestReconnectWithTokenKeepsTheConnection checks that a token reconnect renews the
// same connection (same id, new credentials), so an agent bound to it still calls its
// tool, now with the new token, and that what must be refused changes nothing.
func TestReconnectWithTokenKeepsTheConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		a, agent := boundAgent(t, w, conn)

		refused := []struct {
			name   string
			who    actor
			path   string
			body   string
			status int
			field  string
		}{
			{name: "another account's token", who: w.admin, path: conn, body: `{"token":"` + otherToken + `"}`, status: http.StatusBadRequest, field: "token"},
			{name: "a token the provider refuses", who: w.admin, path: conn, body: `{"token":"` + revokedToken + `"}`, status: http.StatusBadRequest, field: "token"},
			{name: "no token", who: w.admin, path: conn, body: `{}`, status: http.StatusBadRequest, field: "token"},
			{name: "a member who does not own it", who: w.member, path: conn, body: `{"token":"` + renewedToken + `"}`, status: http.StatusForbidden},
			{name: "another tenant", who: w.ownerB, path: conn, body: `{"token":"` + renewedToken + `"}`, status: http.StatusNotFound},
			{name: "an unknown connection", who: w.admin, path: "con_00000000000000000000000000", body: `{"token":"` + renewedToken + `"}`, status: http.StatusNotFound},
		}
		for _, tt := range refused {
			status, b := w.do(tt.who, http.MethodPost, "/api/connections/"+tt.path+"/reconnect", tt.body)
			if status != tt.status {
				t.Errorf("%s: status %d %s, want %d", tt.name, status, b, tt.status)
				continue
			}
			if tt.field != "" {
				if e := decodeError(t, b).Error; e.Field != tt.field {
					t.Errorf("%s: error field %q (%s), want %q", tt.name, e.Field, b, tt.field)
				}
			}
		}
		var before connView
		w.want(w.admin, http.MethodGet, "/api/connections/"+conn, "", http.StatusOK, &before)
		if diff := cmp.Diff([]string{"repo", "read:org"}, before.Scopes); diff != "" {
			t.Errorf("a refused reconnect changed the connection's scopes (-want +got):\n%s", diff)
		}

		var got connView
		w.want(w.admin, http.MethodPost, "/api/connections/"+conn+"/reconnect", `{"token":"`+renewedToken+`"}`, http.StatusOK, &got)
		want := connView{ID: conn, Provider: "github", AccountLabel: "octocat", Status: "active", Shared: true, Scopes: []string{"repo"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reconnected connection (-want +got):\n%s", diff)
		}
		var list struct {
			Connections []connView `json:"connections"`
		}
		w.want(w.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &list)
		if len(list.Connections) != 1 || list.Connections[0].ID != conn {
			t.Errorf("after the reconnect the tenant has %+v, want only %s", list.Connections, conn)
		}

		var res struct {
			ConnectionID string `json:"connection_id"`
		}
		w.want(agent, http.MethodPost, "/api/tools/github_get_issue/call", `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusOK, &res)
		if res.ConnectionID != conn {
			t.Errorf("the agent's call ran on %q, want %s", res.ConnectionID, conn)
		}
		reqs := w.github.requests()
		if last := reqs[len(reqs)-1]; last != "GET /repos/octo-org/hello/issues/7 Bearer "+renewedToken {
			t.Errorf("the agent's call sent %q, want the renewed token", last)
		}
		var view agentBody
		w.want(w.admin, http.MethodGet, "/api/agents/"+a.ID, "", http.StatusOK, &view)
		if len(view.Tools) != 1 || view.Tools[0].ConnectionMissing {
			t.Errorf("after the reconnect the agent's tools are %+v, want github_get_issue on a present connection", view.Tools)
		}
	})
}

// TestAgentFlagsMissingConnection checks that an agent bound to a connection that was
// disconnected says so, on its own view and in the list.
func TestAgentFlagsMissingConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		kept := w.connect(w.admin, otherToken, true)
		var a agentBody
		w.want(w.admin, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
			"name": "Both", "tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}, {"tool": "github_create_issue", "connection_id": kept}},
		}), http.StatusCreated, &a)
		missing := func(v agentBody) map[string]bool {
			out := map[string]bool{}
			for _, tl := range v.Tools {
				out[tl.Tool] = tl.ConnectionMissing
			}
			return out
		}
		if diff := cmp.Diff(map[string]bool{"github_get_issue": false, "github_create_issue": false}, missing(a)); diff != "" {
			t.Errorf("before the disconnect, connection_missing (-want +got):\n%s", diff)
		}
		w.want(w.admin, http.MethodDelete, "/api/connections/"+conn, "", http.StatusNoContent, nil)

		want := map[string]bool{"github_get_issue": true, "github_create_issue": false}
		var one agentBody
		w.want(w.member, http.MethodGet, "/api/agents/"+a.ID, "", http.StatusOK, &one)
		if diff := cmp.Diff(want, missing(one)); diff != "" {
			t.Errorf("the agent's view, connection_missing (-want +got):\n%s", diff)
		}
		var list struct {
			Agents []agentBody `json:"agents"`
		}
		w.want(w.admin, http.MethodGet, "/api/agents", "", http.StatusOK, &list)
		if len(list.Agents) != 1 {
			t.Fatalf("agents %+v, want one", list.Agents)
		}
		if diff := cmp.Diff(want, missing(list.Agents[0])); diff != "" {
			t.Errorf("the agents list, connection_missing (-want +got):\n%s", diff)
		}
	})
}

// connView is the part of a connection's answer the reconnect tests compare.
type connView struct {
	ID           string   `json:"id"`
	Provider     string   `json:"provider"`
	AccountLabel string   `json:"account_label"`
	Status       string   `json:"status"`
	Shared       bool     `json:"shared"`
	Scopes       []string `json:"scopes"`
}
