package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestRuns starts a run through POST /api/runs, follows it to its output, lists and
// cancels runs, and checks that another tenant's or user's run answers like a missing one.
func TestRuns(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		conn := w.connect(w.admin, goodToken, false)

		var started runs.View
		w.want(w.admin, http.MethodPost, "/api/runs", `{"tool":"github_get_issue","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`, http.StatusAccepted, &started)
		if started.State != runs.StateWorking || started.ConnectionID != conn || started.Tool != "github_get_issue" {
			t.Fatalf("started run = %+v", started)
		}
		admin := switchboard.Principal{TenantID: w.a.ID, Kind: switchboard.PrincipalUser, UserID: w.admin.userID}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := w.runs.Wait(ctx, admin, started.ID, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		var got runs.View
		w.want(w.admin, http.MethodGet, "/api/runs/"+started.ID, "", http.StatusOK, &got)
		var issue struct {
			Number int    `json:"number"`
			Title  string `json:"title"`
		}
		if err := json.Unmarshal(got.Output, &issue); err != nil || got.State != runs.StateCompleted || issue.Number != 7 || issue.Title != "Try it works" {
			t.Fatalf("run = %+v (output %s, %v), want completed with issue 7", got, got.Output, err)
		}

		// A run waiting for a confirmation, to cancel.
		pending, err := w.runs.StartConfirm(ctx, admin, runs.Call{Tool: "github_get_issue", ConnectionID: conn, Args: json.RawMessage(`{"owner":"octo-org","repo":"hello","issue_number":7}`)}, "Read issue 7")
		if err != nil {
			t.Fatal(err)
		}

		var list struct {
			Runs       []runs.View `json:"runs"`
			NextCursor string      `json:"next_cursor"`
		}
		w.want(w.admin, http.MethodGet, "/api/runs?limit=1", "", http.StatusOK, &list)
		if len(list.Runs) != 1 || list.Runs[0].ID != pending.ID || list.NextCursor == "" || list.Runs[0].Output != nil {
			t.Fatalf("first page = %+v", list)
		}
		cursor := list.NextCursor
		list.Runs, list.NextCursor = nil, ""
		w.want(w.admin, http.MethodGet, "/api/runs?limit=1&cursor="+cursor, "", http.StatusOK, &list)
		if len(list.Runs) != 1 || list.Runs[0].ID != started.ID || list.NextCursor != "" {
			t.Fatalf("second page = %+v", list)
		}

		// Other principals: tenant B's owner and tenant A's member see nothing of the admin's runs.
		for _, other := range []struct {
			name string
			who  actor
		}{{name: "another tenant", who: w.ownerB}, {name: "another user", who: w.member}} {
			t.Run(other.name, func(t *testing.T) {
				for _, id := range []string{started.ID, pending.ID, "run_nope"} {
					for _, req := range []struct{ method, path string }{
						{http.MethodGet, "/api/runs/" + id},
						{http.MethodPost, "/api/runs/" + id + "/cancel"},
					} {
						status, b := w.do(other.who, req.method, req.path, "")
						e := decodeError(t, b)
						if status != http.StatusNotFound || e.Error.Code != "not_found" || e.Error.Message != "run not found" {
							t.Errorf("%s %s: %d %s, want 404 run not found", req.method, req.path, status, b)
						}
					}
				}
				list.Runs, list.NextCursor = nil, ""
				w.want(other.who, http.MethodGet, "/api/runs", "", http.StatusOK, &list)
				if len(list.Runs) != 0 {
					t.Errorf("lists another principal's runs: %+v", list.Runs)
				}
				// Starting a run on the admin's connection by id is refused by the router
				// before any run exists.
				status, b := w.do(other.who, http.MethodPost, "/api/runs", `{"tool":"github_get_issue","connection_id":"`+conn+`","arguments":{"owner":"octo-org","repo":"hello","issue_number":7}}`)
				if e := decodeError(t, b); status != http.StatusNotFound || e.Error.Code != "not_found" {
					t.Errorf("run on another's connection: %d %s, want 404 not_found", status, b)
				}
			})
		}

		var canceled runs.View
		w.want(w.admin, http.MethodPost, "/api/runs/"+pending.ID+"/cancel", "", http.StatusOK, &canceled)
		if canceled.State != runs.StateCanceled {
			t.Fatalf("canceled = %+v", canceled)
		}
		status, b := w.do(w.admin, http.MethodPost, "/api/runs/"+pending.ID+"/cancel", "")
		if e := decodeError(t, b); status != http.StatusConflict || e.Error.Code != "conflict" {
			t.Errorf("second cancel: %d %s, want 409", status, b)
		}

		bad := []struct {
			name   string
			method string
			path   string
			body   string
			field  string
		}{
			{name: "no tool", method: http.MethodPost, path: "/api/runs", body: `{"arguments":{}}`, field: "tool"},
			{name: "bad argument", method: http.MethodPost, path: "/api/runs", body: `{"tool":"github_get_issue","arguments":{"owner":"octo-org","repo":"hello","issue_number":"seven"}}`, field: "issue_number"},
			{name: "unknown field", method: http.MethodPost, path: "/api/runs", body: `{"tool":"github_get_issue","later":true}`, field: "later"},
			{name: "limit not a number", method: http.MethodGet, path: "/api/runs?limit=ten", field: "limit"},
			{name: "limit too large", method: http.MethodGet, path: "/api/runs?limit=1000", field: "limit"},
			{name: "unknown state", method: http.MethodGet, path: "/api/runs?state=done", field: "state"},
		}
		for _, tt := range bad {
			t.Run(tt.name, func(t *testing.T) {
				status, b := w.do(w.admin, tt.method, tt.path, tt.body)
				if e := decodeError(t, b); status != http.StatusBadRequest || e.Error.Field != tt.field {
					t.Errorf("%d %s, want 400 naming %s", status, b, tt.field)
				}
			})
		}
		if status, _ := w.do(actor{}, http.MethodGet, "/api/runs", ""); status != http.StatusUnauthorized {
			t.Errorf("GET /api/runs without a key: %d, want 401", status)
		}
	})
}
