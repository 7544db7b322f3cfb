package browser

import (
	"net/url"
	"strings"
	"testing"
)

// browserWorkflow is what the browser's run through the Workflows section reported
// (e2e/browser/workflows.mjs).
type browserWorkflow struct {
	Problems []struct {
		Field string `json:"field"`
		Text  string `json:"text"`
	} `json:"problems"`
	HookURL       string   `json:"hook_url"`
	RunID         string   `json:"run_id"`
	CanceledRunID string   `json:"canceled_run_id"`
	Canceled      bool     `json:"canceled"`
	AgentTools    []string `json:"agent_tools"`
	Weights       map[string]struct {
		Cold int `json:"cold_bytes"`
		Warm int `json:"warm_bytes"`
	} `json:"weights"`
}

// checkBrowserWorkflows checks the browser's run through the Workflows section: axe-core
// on each of its pages, the workflow's two steps reaching the fake GitHub in order (the
// search carrying the title the first step read), the canceled run sending nothing (the
// caller checks GitHub got no PATCH but the approved one), the agent's pick saved, and
// each page's weight.
func checkBrowserWorkflows(t *testing.T, sum browserSummary, gh *recorder, srv *server) {
	t.Helper()
	if strings.Contains(srv.Stdout.String()+srv.Stderr.String(), "e2e-webhook-secret-0123456789") {
		t.Error("the server logged the webhook secret typed into the workflow page")
	}
	if want := srv.BaseURL + "/hooks/workflows/default/triage_issue/github"; sum.Workflow.HookURL != want {
		t.Errorf("the workflow page gave the payload URL %q, want %q", sum.Workflow.HookURL, want)
	}
	for _, page := range []string{"workflows list empty", "workflow editor problems", "workflow editor dry run", "workflow editor saved", "workflow run",
		"workflows list", "workflow run waiting", "agent builder workflows", "narrow /workflows", "narrow /workflows/triage_issue", "narrow /workflow-runs/run",
		"dark /workflows", "dark /workflows/triage_issue", "dark /workflow-runs/run"} {
		if n, ok := sum.Axe[page]; !ok || n != 0 {
			t.Errorf("axe-core on %s: ran %v, %d serious or critical violations", page, ok, n)
		}
	}
	w := sum.Workflow
	if len(w.Problems) == 0 || w.RunID == "" || w.CanceledRunID == "" || !w.Canceled {
		t.Errorf("the workflow pages reported %+v", w)
	}
	var searched []string
	titles := 0
	for _, r := range gh.All() {
		if r.Path == "/search/repositories" {
			q, _ := url.ParseQuery(r.Query)
			searched = append(searched, q.Get("q"))
			if q.Get("q") == githubIssueTitle {
				titles++
			}
		}
	}
	if titles != 1 {
		t.Errorf("GitHub was searched for %q, want once for the issue's title %q (the workflow's second step)", searched, githubIssueTitle)
	}
	if len(w.AgentTools) != 1 || w.AgentTools[0] != "run_flow__triage_issue@" {
		t.Errorf("the agent picked %v, want run_flow__triage_issue without a connection", w.AgentTools)
	}
	for page, wt := range w.Weights {
		t.Logf("page weight %s: %d bytes cold, %d bytes warm", page, wt.Cold, wt.Warm)
		if wt.Cold == 0 || wt.Cold >= 100_000 || wt.Warm >= 10_000 {
			t.Errorf("%s weighs %d bytes cold and %d warm, want under 100 KB and 10 KB", page, wt.Cold, wt.Warm)
		}
	}
	if len(w.Weights) != 3 {
		t.Errorf("weights of %d workflow pages, want 3", len(w.Weights))
	}
}
