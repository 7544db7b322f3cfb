package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// runsSummary is what run.mjs's runs flow reports.
type runsSummary struct {
	AsyncRunID string `json:"async_run_id"`
	AsyncRun   struct {
		State      string         `json:"state"`
		Output     map[string]any `json:"output"`
		StartedAt  *string        `json:"started_at"`
		FinishedAt *string        `json:"finished_at"`
	} `json:"async_run"`
	AsyncRunResource struct {
		State        string   `json:"state"`
		OutputNumber *float64 `json:"output_number"`
	} `json:"async_run_resource"`
	// Task is the MCP task the SDK's experimental.tasks.callToolStream ran.
	Task struct {
		Created  bool     `json:"created"`
		Statuses []string `json:"statuses"`
		Result   *struct {
			IsError bool     `json:"isError"`
			Number  *float64 `json:"number"`
			Text    string   `json:"text"`
		} `json:"result"`
		Error string `json:"error"`
	} `json:"task"`
	Fallback struct {
		IsError     bool   `json:"isError"`
		State       string `json:"state"`
		Text        string `json:"text"`
		AfterAccept struct {
			State       string `json:"state"`
			OutputState string `json:"output_state"`
		} `json:"after_accept"`
	} `json:"fallback"`
	ElicitDecline toolErrorSummary `json:"elicit_decline"`
	ElicitAccept  callSummary      `json:"elicit_accept"`
	ElicitAsked   []string         `json:"elicit_asked"`
	TenantBOnARun struct {
		GetRun            toolErrorSummary `json:"switchboard_get_run"`
		CancelRun         toolErrorSummary `json:"switchboard_cancel_run"`
		SubmitElicitation toolErrorSummary `json:"switchboard_submit_elicitation"`
		ListCount         int              `json:"list_count"`
		Resource          struct {
			Refused bool   `json:"refused"`
			Message string `json:"message"`
		} `json:"resource"`
	} `json:"tenant_b_on_a_run"`
}

// checkRunsSummary checks the runs flow of run.mjs: an async run from start to output
// (by tool and by resource), the input_required fallback, the person's decline and
// accept, and tenant beta refused on every path to default's run.
func checkRunsSummary(t *testing.T, s runsSummary) {
	t.Helper()
	if !strings.HasPrefix(s.AsyncRunID, "run_") {
		t.Fatalf("no async run: %+v", s)
	}
	if r := s.AsyncRun; r.State != "completed" || r.Output["number"] != float64(githubIssueNum) || r.Output["title"] != githubIssueTitle || r.StartedAt == nil || r.FinishedAt == nil {
		t.Errorf("async run = %+v; want completed with issue %d and its timestamps", r, githubIssueNum)
	}
	if r := s.AsyncRunResource; r.State != "completed" || r.OutputNumber == nil || *r.OutputNumber != githubIssueNum {
		t.Errorf("switchboard://runs/%s = %+v", s.AsyncRunID, r)
	}
	if tk := s.Task; !tk.Created || tk.Error != "" || tk.Result == nil || tk.Result.IsError || tk.Result.Number == nil || *tk.Result.Number != githubIssueNum {
		t.Errorf("task through the TypeScript SDK's callToolStream = %+v (result %+v); want created, then the issue", tk, tk.Result)
	}
	if f := s.Fallback; !f.IsError || f.State != "input_required" || !strings.Contains(f.Text, "switchboard_submit_elicitation") || f.AfterAccept.State != "completed" || f.AfterAccept.OutputState != "closed" {
		t.Errorf("destructive call without elicitation: %+v; want input_required, then completed with the issue closed", f)
	}
	if d := s.ElicitDecline; !d.IsError || !strings.Contains(d.Text, "declined") {
		t.Errorf("declined call: %+v", d)
	}
	if a := s.ElicitAccept; a.IsError || a.StructuredContent["state"] != "closed" || a.StructuredContent["number"] != float64(githubIssueNum) {
		t.Errorf("accepted call: %+v", a)
	}
	if len(s.ElicitAsked) != 2 {
		t.Fatalf("the person was asked %d times, want 2: %q", len(s.ElicitAsked), s.ElicitAsked)
	}
	for _, msg := range s.ElicitAsked {
		if !strings.Contains(msg, "github_update_issue") || !strings.Contains(msg, githubLogin) || !strings.Contains(msg, `"state":"closed"`) {
			t.Errorf("the person was asked %q; want the tool, the account and the arguments", msg)
		}
	}
	b := s.TenantBOnARun
	for name, res := range map[string]toolErrorSummary{"get": b.GetRun, "cancel": b.CancelRun, "submit": b.SubmitElicitation} {
		if !res.IsError || res.Text != "run not found" {
			t.Errorf("tenant beta's %s of default's run: %+v; want run not found", name, res)
		}
	}
	if b.ListCount != 0 || !b.Resource.Refused || !strings.Contains(b.Resource.Message, "not found") {
		t.Errorf("tenant beta on default's run: list %d, resource %+v; want nothing listed and the resource not found", b.ListCount, b.Resource)
	}
}

// checkRunsREST reads the async run through GET /api/runs/{id}: its owner gets it,
// tenant beta gets the answer of a missing run.
func checkRunsREST(t *testing.T, owner, other *apiClient, runID string) {
	t.Helper()
	status, body := owner.Do(t, http.MethodGet, "/api/runs/"+runID, nil)
	var run struct {
		ID    string `json:"run_id"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(body, &run); status != http.StatusOK || err != nil || run.ID != runID || run.State != "completed" {
		t.Errorf("GET /api/runs/%s: %d %s", runID, status, body)
	}
	for _, id := range []string{runID, "run_missing"} {
		status, body := other.Do(t, http.MethodGet, "/api/runs/"+id, nil)
		if status != http.StatusNotFound || !strings.Contains(string(body), `"run not found"`) {
			t.Errorf("tenant beta's GET /api/runs/%s: %d %s; want 404 run not found", id, status, body)
		}
	}
}
