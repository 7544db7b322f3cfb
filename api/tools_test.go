package api_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/audit"

	"github.com/switchboard-hub/switchboard"
	hubtools "github.com/switchboard-hub/switchboard/providers/hub"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestCallTool runs tools through POST /api/tools/{tool}/call: the router's checks, the
// upstream's answers and failures, and the audit record each call leaves.
func TestCallTool(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, false)
		otherB := w.connect(w.ownerB, otherToken, false)

		var listed struct {
			Tools []struct {
				Tool        string `json:"tool"`
				Provider    string `json:"provider"`
				Connections []struct {
					ID    string `json:"id"`
					Label string `json:"label"`
				} `json:"connections"`
			} `json:"tools"`
		}
		w.want(w.admin, http.MethodGet, "/api/tools", "", http.StatusOK, &listed)
		found := false
		for _, tl := range listed.Tools {
			if tl.Tool == "github_get_issue" {
				found = len(tl.Connections) == 1 && tl.Connections[0].ID == conn && tl.Connections[0].Label == "octocat" && tl.Provider == "github"
			}
		}
		if !found {
			t.Fatalf("GET /api/tools lacks github_get_issue on connection %s: %+v", conn, listed)
		}
		w.want(w.member, http.MethodGet, "/api/tools", "", http.StatusOK, &listed)
		for _, tl := range listed.Tools {
			if len(tl.Connections) > 0 { // the hub's own tools run on none
				t.Fatalf("the member may call the owner's private connection's tools: %+v", listed.Tools)
			}
		}

		var ok struct {
			Tool         string         `json:"tool"`
			ConnectionID string         `json:"connection_id"`
			Result       map[string]any `json:"result"`
		}
		w.want(w.admin, http.MethodPost, "/api/tools/github_get_issue/call",
			`{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusOK, &ok)
		if ok.ConnectionID != conn || ok.Result["title"] != "Try it works" || ok.Result["number"] != float64(7) {
			t.Fatalf("call result %+v", ok)
		}
		got := w.github.requests()
		if diff := cmp.Diff("GET /repos/octo-org/hello/issues/7 Bearer "+goodToken, got[len(got)-1]); diff != "" {
			t.Errorf("request GitHub got (-want +got):\n%s", diff)
		}

		failures := []struct {
			name       string
			who        actor
			tool       string
			body       string
			wantStatus int
			wantCode   string
			wantField  string
			wantMsg    string
		}{
			{name: "bad argument", who: w.admin, tool: "github_get_issue", body: `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":"seven"}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "issue_number"},
			{name: "missing argument", who: w.admin, tool: "github_get_issue", body: `{"arguments":{"owner":"octo-org","repo":"hello"}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "issue_number"},
			{name: "upstream 404", who: w.admin, tool: "github_get_issue", body: `{"connection_id":"` + conn + `","arguments":{"owner":"octo-org","repo":"hello","issue_number":8}}`, wantStatus: http.StatusNotFound, wantCode: "not_found"},
			{name: "upstream 422 names the field", who: w.admin, tool: "github_create_issue", body: `{"arguments":{"owner":"octo-org","repo":"hello","title":"Bug","assignees":["nobody-here"]}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "assignees", wantMsg: "Validation Failed: assignees invalid"},
			{name: "upstream 429", who: w.admin, tool: "github_get_issue", body: `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":429}}`, wantStatus: http.StatusTooManyRequests, wantCode: "rate_limited"},
			{name: "unknown tool", who: w.admin, tool: "github_nope", body: `{"connection_id":"` + conn + `","arguments":{}}`, wantStatus: http.StatusNotFound, wantCode: "not_found"},
			{name: "another tenant's connection", who: w.admin, tool: "github_get_issue", body: `{"connection_id":"` + otherB + `","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, wantStatus: http.StatusNotFound, wantCode: "not_found", wantMsg: "connection not found"},
			{name: "member without a connection", who: w.member, tool: "github_get_issue", body: `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, wantStatus: http.StatusNotFound, wantCode: "not_found", wantMsg: "connect an account"},
			{name: "member naming the owner's private connection", who: w.member, tool: "github_get_issue", body: `{"connection_id":"` + conn + `","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, wantStatus: http.StatusNotFound, wantCode: "not_found", wantMsg: "connection not found"},
			{name: "arguments not an object", who: w.admin, tool: "github_get_issue", body: `{"arguments":[1]}`, wantStatus: http.StatusBadRequest, wantCode: "invalid", wantField: "arguments"},
		}
		for _, tc := range failures {
			t.Run(tc.name, func(t *testing.T) {
				status, b := w.do(tc.who, http.MethodPost, "/api/tools/"+tc.tool+"/call", tc.body)
				if status != tc.wantStatus {
					t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, b)
				}
				e := decodeError(t, b)
				if e.Error.Code != tc.wantCode || e.Error.Field != tc.wantField || !strings.Contains(e.Error.Message, tc.wantMsg) {
					t.Fatalf("error %+v, want code %s field %q message with %q", e.Error, tc.wantCode, tc.wantField, tc.wantMsg)
				}
			})
		}

		if !slices.Contains(w.github.requests(), "POST /repos/octo-org/hello/issues Bearer "+goodToken) {
			t.Errorf("GitHub got no POST /repos/octo-org/hello/issues with the connection's token: %q", w.github.requests())
		}

		// The calls are in the audit log, and the filters narrow it.
		w.flushAudit()
		type events struct {
			Events []struct {
				Kind         string `json:"kind"`
				Tool         string `json:"tool"`
				ConnectionID string `json:"connection_id"`
				Outcome      string `json:"outcome"`
				LatencyUS    int64  `json:"latency_us"`
			} `json:"events"`
		}
		var ev events
		w.want(w.admin, http.MethodGet, "/api/audit?kind=tool_call&outcome=ok&connection_id="+conn, "", http.StatusOK, &ev)
		if len(ev.Events) != 1 || ev.Events[0].Tool != "github_get_issue" || ev.Events[0].LatencyUS <= 0 {
			t.Fatalf("successful calls on %s: %+v", conn, ev.Events)
		}
		w.want(w.admin, http.MethodGet, "/api/audit?outcome=rate_limited", "", http.StatusOK, &ev)
		if len(ev.Events) != 1 || ev.Events[0].Outcome != "rate_limited" {
			t.Fatalf("rate-limited calls: %+v", ev.Events)
		}
		future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		w.want(w.admin, http.MethodGet, "/api/audit?since="+future, "", http.StatusOK, &ev)
		if len(ev.Events) != 0 {
			t.Fatalf("events since an hour from now: %+v", ev.Events)
		}
		w.want(w.admin, http.MethodGet, "/api/audit?until="+future+"&principal=user:"+w.admin.userID+"&kind=tool_call", "", http.StatusOK, &ev)
		if len(ev.Events) < 4 {
			t.Fatalf("the admin's calls before an hour from now: %+v", ev.Events)
		}
		// A member asking for the admin's events gets only their own.
		w.want(w.member, http.MethodGet, "/api/audit?principal=user:"+w.admin.userID, "", http.StatusOK, &ev)
		for _, e := range ev.Events {
			if e.ConnectionID == conn && e.Outcome == "ok" {
				t.Fatalf("the member sees the admin's call: %+v", ev.Events)
			}
		}
		status, b := w.do(w.admin, http.MethodGet, "/api/audit?since=yesterday", "")
		if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != "since" {
			t.Fatalf("bad since: status %d body %s", status, b)
		}

		// The connection shows when it was last used.
		type connList struct {
			Connections []struct {
				ID         string     `json:"id"`
				LastUsedAt *time.Time `json:"last_used_at"`
			} `json:"connections"`
		}
		var conns connList
		w.want(w.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &conns)
		if len(conns.Connections) != 1 || conns.Connections[0].LastUsedAt == nil || time.Since(*conns.Connections[0].LastUsedAt) > time.Minute {
			t.Fatalf("connections %+v: want last_used_at within the minute", conns.Connections)
		}
		conns = connList{}
		w.want(w.ownerB, http.MethodGet, "/api/connections", "", http.StatusOK, &conns)
		if len(conns.Connections) != 1 || conns.Connections[0].LastUsedAt != nil {
			t.Fatalf("tenant B's unused connection: %+v", conns.Connections)
		}
	})
}

// TestHubToolsOverREST: the hub's own tools are router tools: listed by GET /api/tools
// on no connection, and called through POST /api/tools/{tool}/call as the caller (a run
// started with switchboard_run_async is the caller's, read back with
// switchboard_get_run), each call audited.
func TestHubToolsOverREST(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.connect(w.admin, goodToken, false)
		var listed struct {
			Tools []struct {
				Tool        string `json:"tool"`
				Provider    string `json:"provider"`
				Connections []any  `json:"connections"`
			} `json:"tools"`
		}
		w.want(w.admin, http.MethodGet, "/api/tools", "", http.StatusOK, &listed)
		found := map[string]bool{}
		for _, tl := range listed.Tools {
			if (tl.Provider == hubtools.Provider || tl.Provider == hubtools.WorkflowsProvider) && len(tl.Connections) == 0 {
				found[tl.Tool] = true
			}
		}
		for _, name := range []string{hubtools.RunAsync, hubtools.GetRun, hubtools.ListWorkflows} {
			if !found[name] {
				t.Fatalf("GET /api/tools lacks %s on no connection: %+v", name, listed.Tools)
			}
		}
		var started struct {
			Result struct {
				RunID string `json:"run_id"`
				Tool  string `json:"tool"`
			} `json:"result"`
		}
		w.want(w.admin, http.MethodPost, "/api/tools/switchboard_run_async/call",
			`{"arguments":{"tool":"github_get_issue","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}}`, http.StatusOK, &started)
		if started.Result.RunID == "" || started.Result.Tool != "github_get_issue" {
			t.Fatalf("switchboard_run_async answered %+v", started)
		}
		p := switchboard.Principal{TenantID: w.admin.tenant, Kind: switchboard.PrincipalUser, UserID: w.admin.userID}
		if _, err := w.runs.Wait(context.Background(), p, started.Result.RunID, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Result struct {
				RunID  string         `json:"run_id"`
				State  string         `json:"state"`
				Output map[string]any `json:"output"`
			} `json:"result"`
		}
		w.want(w.admin, http.MethodPost, "/api/tools/switchboard_get_run/call", `{"arguments":{"run_id":"`+started.Result.RunID+`"}}`, http.StatusOK, &got)
		if got.Result.State != "completed" || got.Result.Output["title"] != "Try it works" {
			t.Fatalf("switchboard_get_run answered %+v", got)
		}
		// Another person's run is not found for the member.
		if status, _ := w.do(w.member, http.MethodPost, "/api/tools/switchboard_get_run/call", `{"arguments":{"run_id":"`+started.Result.RunID+`"}}`); status != http.StatusNotFound {
			t.Fatalf("the member read the admin's run: %d", status)
		}
		w.flushAudit()
		events, _, err := audit.NewStore(db).List(context.Background(), w.a.ID, audit.ListOptions{Kind: audit.KindToolCall, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var outcomes []string
		for _, e := range events {
			if e.Tool == hubtools.GetRun {
				outcomes = append(outcomes, e.Outcome)
			}
		}
		if diff := cmp.Diff([]string{"not_found", "ok"}, outcomes); diff != "" {
			t.Errorf("switchboard_get_run rows, newest first (-want +got):\n%s", diff)
		}
	})
}
