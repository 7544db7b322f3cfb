package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// issueToSlack reads a GitHub issue and posts its title to Slack.
const issueToSlack = `name: issue_to_slack
description: Post an issue's title to a channel
parameters:
  type: object
  properties:
    number: {type: integer}
    channel: {type: string}
  required: [number, channel]
steps:
  - name: issue
    tool: github_get_issue
    args: {owner: octo-org, repo: hello, issue_number: "${{ params.number }}"}
  - name: post
    tool: slack_post_message
    needs: [issue]
    args:
      channel: "${{ params.channel }}"
      text: "Issue #${{ string(steps.issue.output.number) }}: ${{ steps.issue.output.title }}"
outputs:
  title: "${{ steps.issue.output.title }}"
`

// TestWorkflowsAPI saves a workflow through /api/workflows (problems named by step and
// field first), dry-runs it, runs it against the fake GitHub and Slack, reads its
// steps, and checks that another tenant sees none of it.
func TestWorkflowsAPI(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.connect(w.admin, goodToken, false)
		w.connectSlack(w.admin, slackMemberToken, false)

		bad, _ := json.Marshal(map[string]any{"definition": strings.Replace(issueToSlack, "issue_number:", "issue_numbr:", 1)})
		status, body := w.do(w.admin, http.MethodPost, "/api/workflows", string(bad))
		var refused struct {
			Problems []workflows.Problem `json:"problems"`
		}
		_ = json.Unmarshal(body, &refused)
		if status != http.StatusBadRequest || len(refused.Problems) == 0 || refused.Problems[0].Step != "issue" || !strings.HasPrefix(refused.Problems[0].Field, "args.issue_numb") {
			t.Fatalf("bad definition: %d %s", status, body)
		}
		good, _ := json.Marshal(map[string]any{"definition": issueToSlack})
		var saved struct {
			Name    string `json:"name"`
			Tool    string `json:"tool"`
			Version int    `json:"version"`
			Source  string `json:"source"`
		}
		w.want(w.admin, http.MethodPost, "/api/workflows", string(good), http.StatusCreated, &saved)
		if saved.Tool != "run_flow__issue_to_slack" || saved.Version != 1 || saved.Source != issueToSlack {
			t.Fatalf("saved %+v", saved)
		}
		var plan workflows.Plan
		w.want(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/dry-run", `{"parameters":{"number":7,"channel":"C0123ABCD"}}`, http.StatusOK, &plan)
		if len(plan.Steps) != 2 || len(plan.Changes) != 1 || !strings.HasPrefix(plan.Changes[0], "post:") {
			t.Fatalf("plan %+v", plan)
		}
		// The plan names the accounts each step runs on, by their labels.
		var conns struct {
			Connections []struct {
				ID    string `json:"id"`
				Label string `json:"account_label"`
			} `json:"connections"`
		}
		w.want(w.admin, http.MethodGet, "/api/connections", "", http.StatusOK, &conns)
		labels := map[string]string{}
		for _, c := range conns.Connections {
			labels[c.ID] = c.Label
		}
		for _, st := range plan.Steps {
			if st.Account == "" || st.Account != labels[st.ConnectionID] || strings.HasPrefix(st.Account, "con_") {
				t.Errorf("plan step %s runs on %q, want its connection's label %q", st.Name, st.Account, labels[st.ConnectionID])
			}
		}
		if post := plan.Steps[1]; !strings.Contains(plan.Changes[0], " on "+post.Account) {
			t.Errorf("the plan's change %q does not name the account %q", plan.Changes[0], post.Account)
		}
		if status, body := w.do(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/runs", `{"parameters":{"number":"seven"}}`); status != http.StatusBadRequest || !strings.Contains(string(body), "parameters.") {
			t.Fatalf("bad parameters: %d %s", status, body)
		}
		var started runs.View
		w.want(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/runs", `{"parameters":{"number":7,"channel":"C0123ABCD"}}`, http.StatusAccepted, &started)
		admin := switchboard.Principal{TenantID: w.a.ID, Kind: switchboard.PrincipalUser, UserID: w.admin.userID}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if v, err := w.runs.Wait(ctx, admin, started.ID, 20*time.Millisecond); err != nil || v.State != runs.StateCompleted {
			t.Fatalf("run ended %+v, %v", v, err)
		}
		var st workflows.RunStatus
		w.want(w.admin, http.MethodGet, "/api/workflow-runs/"+started.ID, "", http.StatusOK, &st)
		if st.StepsCompleted != 2 || len(st.Steps) != 2 {
			t.Fatalf("status %+v", st)
		}
		posted := w.slack.messages()
		if len(posted) != 1 || !strings.HasSuffix(posted[0], "C0123ABCD Issue #7: Try it works") {
			t.Fatalf("slack got %v", posted)
		}
		var list struct {
			Runs []runs.View `json:"runs"`
		}
		w.want(w.admin, http.MethodGet, "/api/workflows/issue_to_slack/runs", "", http.StatusOK, &list)
		if len(list.Runs) != 1 || list.Runs[0].ID != started.ID {
			t.Fatalf("runs %+v", list)
		}
		// Tenant B sees none of it.
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, "/api/workflows/issue_to_slack"},
			{http.MethodDelete, "/api/workflows/issue_to_slack"},
			{http.MethodPost, "/api/workflows/issue_to_slack/runs"},
			{http.MethodGet, "/api/workflow-runs/" + started.ID},
			{http.MethodPost, "/api/workflow-runs/" + started.ID + "/cancel"},
		} {
			body := ""
			if req.method == http.MethodPost {
				body = `{}`
			}
			if status, b := w.do(w.ownerB, req.method, req.path, body); status != http.StatusNotFound {
				t.Fatalf("tenant B %s %s: %d %s", req.method, req.path, status, b)
			}
		}
		// A member may not delete the admin's workflow; the admin may.
		if status, _ := w.do(w.member, http.MethodDelete, "/api/workflows/issue_to_slack", ""); status != http.StatusForbidden {
			t.Fatalf("member delete: %d", status)
		}
		w.want(w.admin, http.MethodDelete, "/api/workflows/issue_to_slack", "", http.StatusNoContent, nil)
	})
}

// TestWorkflowLifecycleAPI: a workflow is deactivated and activated again through the
// API (a deactivated one does not start), and an admin sets whether the tenant keeps
// the workflow_<name> tools; tool_aliases left out is refused by name.
func TestWorkflowLifecycleAPI(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.connect(w.admin, goodToken, false)
		w.connectSlack(w.admin, slackMemberToken, false)
		good, _ := json.Marshal(map[string]any{"definition": issueToSlack})
		w.want(w.admin, http.MethodPost, "/api/workflows", string(good), http.StatusCreated, nil)
		var view struct {
			State string `json:"state"`
		}
		w.want(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/deactivate", "", http.StatusOK, &view)
		if view.State != "deactivated" {
			t.Fatalf("deactivated state = %q", view.State)
		}
		if status, body := w.do(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/runs", `{"parameters":{"number":7,"channel":"C0123ABCD"}}`); status != http.StatusConflict || !strings.Contains(string(body), "deactivated") {
			t.Fatalf("run of a deactivated workflow: %d %s", status, body)
		}
		w.want(w.admin, http.MethodPost, "/api/workflows/issue_to_slack/activate", "", http.StatusOK, &view)
		if view.State != "active" {
			t.Fatalf("activated state = %q", view.State)
		}
		if status, body := w.do(w.admin, http.MethodPost, "/api/workflows/nope/activate", ""); status != http.StatusNotFound {
			t.Fatalf("activate an unknown workflow: %d %s", status, body)
		}
		var settings struct {
			ToolAliases *bool `json:"tool_aliases"`
		}
		w.want(w.admin, http.MethodGet, "/api/workflow-settings", "", http.StatusOK, &settings)
		if settings.ToolAliases == nil || *settings.ToolAliases {
			t.Fatalf("default settings = %+v", settings)
		}
		if status, body := w.do(w.admin, http.MethodPut, "/api/workflow-settings", `{}`); status != http.StatusBadRequest || !strings.Contains(string(body), "tool_aliases") {
			t.Fatalf("settings without tool_aliases: %d %s", status, body)
		}
		w.want(w.admin, http.MethodPut, "/api/workflow-settings", `{"tool_aliases":true}`, http.StatusOK, nil)
		w.want(w.admin, http.MethodGet, "/api/workflow-settings", "", http.StatusOK, &settings)
		if settings.ToolAliases == nil || !*settings.ToolAliases {
			t.Fatalf("settings after the change = %+v", settings)
		}
	})
}
