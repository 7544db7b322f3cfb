package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/usage"
)

// TestUsageShowsEachAskerWhatTheyMay checks /api/usage and its chart against calls
// of several principals of two tenants: an admin sees the workspace's, a member their
// own and their agents', an agent's key its agent's; another tenant's ids are not found.
func TestUsageShowsEachAskerWhatTheyMay(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, true)
		connB := w.connect(w.ownerB, otherToken, false)
		newAgent := func(who actor, name string) (id string, key actor) {
			var a agentBody
			w.want(who, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{
				"name": name, "tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn}},
			}), http.StatusCreated, &a)
			var k struct {
				Key string `json:"key"`
			}
			w.want(who, http.MethodPost, "/api/agents/"+a.ID+"/keys", `{"name":"k"}`, http.StatusCreated, &k)
			return a.ID, actor{key: k.Key, userID: who.userID, tenant: who.tenant}
		}
		adminAgent, adminAgentKey := newAgent(w.admin, "Reader")
		memberAgent, memberAgentKey := newAgent(w.member, "Helper")
		issue := `{"connection_id":"` + conn + `","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`
		missing := `{"connection_id":"` + conn + `","arguments":{"owner":"octo-org","repo":"hello","issue_number":404}}`
		w.want(w.admin, http.MethodPost, "/api/tools/github_get_issue/call", issue, http.StatusOK, nil)
		w.do(w.admin, http.MethodPost, "/api/tools/github_get_issue/call", missing) // an upstream error
		w.want(w.member, http.MethodPost, "/api/tools/github_get_issue/call", issue, http.StatusOK, nil)
		w.want(adminAgentKey, http.MethodPost, "/api/tools/github_get_issue/call", `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusOK, nil)
		w.want(memberAgentKey, http.MethodPost, "/api/tools/github_get_issue/call", `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusOK, nil)
		w.do(w.ownerB, http.MethodPost, "/api/tools/github_get_issue/call", `{"connection_id":"`+connB+`","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`)
		w.flushAudit()
		if err := usage.NewRollup(db, nil).Pass(context.Background()); err != nil {
			t.Fatal(err)
		}

		type figures struct {
			Calls  int64 `json:"calls"`
			Errors int64 `json:"errors"`
		}
		var got struct {
			Step     string    `json:"step"`
			Total    figures   `json:"total"`
			Buckets  []figures `json:"buckets"`
			TopTools []struct {
				Tool string `json:"tool"`
				figures
			} `json:"top_tools"`
		}
		total := func(who actor, query string) figures {
			t.Helper()
			w.want(who, http.MethodGet, "/api/usage"+query, "", http.StatusOK, &got)
			return got.Total
		}
		if f := total(w.admin, ""); f != (figures{Calls: 5, Errors: 1}) || got.Step != "hour" || len(got.Buckets) != 24 ||
			len(got.TopTools) != 1 || got.TopTools[0].Tool != "github_get_issue" || got.TopTools[0].Calls != 5 {
			t.Errorf("the admin's 24 hours: %+v", got)
		}
		if f := total(w.admin, "?range=30d&agent_id="+adminAgent); f.Calls != 1 || len(got.Buckets) != 30 || got.Step != "day" {
			t.Errorf("the admin's agent over 30 days: %+v", got)
		}
		if f := total(w.admin, "?range=7d&connection_id="+conn); f.Calls != 5 {
			t.Errorf("the connection over 7 days: %+v", f)
		}
		// The member: their own call and their agent's, not the admin's or the admin's agent's.
		if f := total(w.member, "?range=7d"); f != (figures{Calls: 2}) {
			t.Errorf("the member's 7 days: %+v", f)
		}
		if f := total(w.member, "?agent_id="+memberAgent); f.Calls != 1 {
			t.Errorf("the member's agent: %+v", f)
		}
		if f := total(w.member, "?connection_id="+conn); f.Calls != 2 {
			t.Errorf("the member on the shared connection: %+v", f)
		}
		w.want(w.member, http.MethodGet, "/api/usage?agent_id="+adminAgent, "", http.StatusForbidden, nil)
		// An agent's key: its own agent only.
		if f := total(adminAgentKey, ""); f.Calls != 1 {
			t.Errorf("the agent's key: %+v", f)
		}
		w.want(adminAgentKey, http.MethodGet, "/api/usage?agent_id="+memberAgent, "", http.StatusNotFound, nil)
		// Another tenant: its own call, and nothing of tenant A's ids.
		if f := total(w.ownerB, ""); f.Calls != 1 {
			t.Errorf("tenant B's 24 hours: %+v", f)
		}
		w.want(w.ownerB, http.MethodGet, "/api/usage?agent_id="+adminAgent, "", http.StatusNotFound, nil)
		w.want(w.ownerB, http.MethodGet, "/api/usage/chart.svg?connection_id="+conn, "", http.StatusNotFound, nil)
		// Bad input names its field.
		for query, field := range map[string]string{"/api/usage?range=1y": "range", "/api/usage/chart.svg?chart=pie": "chart"} {
			b := w.want(w.admin, http.MethodGet, query, "", http.StatusBadRequest, nil)
			if e := decodeError(t, b); e.Error.Field != field {
				t.Errorf("%s: %s, want an error naming %s", query, b, field)
			}
		}

		status, svg := w.do(w.admin, http.MethodGet, "/api/usage/chart.svg?range=7d&agent_id="+adminAgent, "")
		if status != http.StatusOK || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "Calls per day of agent Reader over the last 7 days") ||
			!strings.Contains(string(svg), "1 call, 0 errors") {
			t.Errorf("the agent's chart: %d %s", status, svg)
		}
		status, svg = w.do(w.admin, http.MethodGet, "/api/usage/chart.svg?chart=latency", "")
		if status != http.StatusOK || !strings.Contains(string(svg), `class="p95"`) || !strings.Contains(string(svg), "5 calls, 1 error (20.0%)") {
			t.Errorf("the workspace's latency chart: %d %s", status, svg)
		}
	})
}
