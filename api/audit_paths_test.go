package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestRESTCallsLeaveOneAuditRow: every call of a tool over REST (direct, or as a run)
// leaves exactly one tool_call row with its outcome: ok, invalid, an upstream error,
// canceled by its caller; and so does a call refused before the router (no
// connection the tool can run on).
func TestRESTCallsLeaveOneAuditRow(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.connect(w.admin, goodToken, true)
		issue := func(n string) string {
			return `{"arguments":{"owner":"octo-org","repo":"hello","issue_number":` + n + `}}`
		}
		run := func(n string) func() {
			return func() {
				var v runs.View
				w.want(w.admin, http.MethodPost, "/api/runs", `{"tool":"github_get_issue",`+strings.TrimPrefix(issue(n), "{"), http.StatusAccepted, &v)
				p := switchboard.Principal{TenantID: w.admin.tenant, Kind: switchboard.PrincipalUser, UserID: w.admin.userID}
				if _, err := w.runs.Wait(context.Background(), p, v.ID, 20*time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
		}
		tests := []struct {
			name string
			do   func()
			want string
		}{
			{name: "call ok", do: func() {
				w.want(w.admin, http.MethodPost, "/api/tools/github_get_issue/call", issue("7"), http.StatusOK, nil)
			}, want: "ok"},
			{name: "call invalid", do: func() { w.do(w.admin, http.MethodPost, "/api/tools/github_get_issue/call", issue(`"seven"`)) }, want: "invalid"},
			{name: "call upstream error", do: func() { w.do(w.admin, http.MethodPost, "/api/tools/github_get_issue/call", issue("404")) }, want: "not_found"},
			{name: "call canceled", do: func() {
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.srv.URL+"/api/tools/github_get_issue/call", strings.NewReader(issue("408")))
				req.Header.Set("Authorization", "Bearer "+w.admin.key)
				req.Header.Set("Content-Type", "application/json")
				done := make(chan struct{})
				go func() {
					defer close(done)
					if res, err := w.srv.Client().Do(req); err == nil {
						res.Body.Close()
					}
				}()
				testwait.Recv(t, w.github.held, "the call to reach GitHub")
				cancel()
				testwait.Recv(t, done, "the canceled request to return")
			}, want: "canceled"},
			{name: "run ok", do: run("7"), want: "ok"},
			{name: "run invalid", do: func() {
				w.do(w.admin, http.MethodPost, "/api/runs", `{"tool":"github_get_issue",`+strings.TrimPrefix(issue(`"seven"`), "{"))
			}, want: "invalid"},
			{name: "run upstream error", do: run("404"), want: "not_found"},
			{name: "run canceled", do: func() {
				var v runs.View
				w.want(w.admin, http.MethodPost, "/api/runs", `{"tool":"github_get_issue",`+strings.TrimPrefix(issue("408"), "{"), http.StatusAccepted, &v)
				testwait.Recv(t, w.github.held, "the run to reach GitHub")
				w.want(w.admin, http.MethodPost, "/api/runs/"+v.ID+"/cancel", "", http.StatusOK, nil)
			}, want: "canceled"},
		}
		store := audit.NewStore(db)
		seen := 0
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.do()
				testwait.Until(t, "the call's audit row", func() bool {
					w.flushAudit()
					events, _, err := store.List(context.Background(), w.a.ID, audit.ListOptions{Kind: audit.KindToolCall, Limit: 100})
					if err != nil {
						t.Fatal(err)
					}
					// A call's row is on record in flight while it runs: wait for its outcome.
					return len(events) > seen && events[0].Outcome != audit.OutcomeInFlight
				})
				w.flushAudit()
				events, _, _ := store.List(context.Background(), w.a.ID, audit.ListOptions{Kind: audit.KindToolCall, Limit: 100})
				var got []string
				for _, e := range events[:len(events)-seen] {
					got = append(got, e.Tool+" "+e.Outcome)
				}
				seen = len(events)
				if diff := cmp.Diff([]string{"github_get_issue " + tt.want}, got); diff != "" {
					t.Errorf("new tool_call rows (-want +got):\n%s", diff)
				}
			})
		}
		// Tenant B has no GitHub connection: the call is refused before the router, and
		// still leaves its row.
		w.do(w.ownerB, http.MethodPost, "/api/tools/github_get_issue/call", issue("7"))
		w.flushAudit()
		events, _, err := store.List(context.Background(), w.b.ID, audit.ListOptions{Kind: audit.KindToolCall})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Outcome != "not_found" || events[0].Tool != "github_get_issue" {
			t.Errorf("tenant B's rows = %+v, want one not_found", events)
		}
	})
}
