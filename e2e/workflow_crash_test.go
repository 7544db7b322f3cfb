package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// crashWorkflow reads an issue from GitHub (read-only: re-run after a crash) and posts
// its title to Slack (a write: sent once).
const crashWorkflow = `name: issue_to_slack
description: Post an issue's title to a channel
parameters:
  type: object
  properties:
    number: {type: integer}
  required: [number]
steps:
  - name: issue
    tool: github_get_issue
    args:
      owner: ` + githubOwner + `
      repo: ` + githubRepo + `
      issue_number: ${{ params.number }}
  - name: post
    tool: slack_post_message
    needs: [issue]
    args:
      channel: ` + slackChannel + `
      text: "Issue #${{ string(steps.issue.output.number) }}: ${{ steps.issue.output.title }}"
outputs:
  title: ${{ steps.issue.output.title }}
  ts: ${{ steps.post.output.ts }}
`

// TestWorkflowSurvivesACrash has an MCP client create a workflow with create_workflow
// on a real server, run it against the fake GitHub and Slack, and SIGKILLs the process
// while GitHub holds the workflow's read step; another process on the same database
// resumes the run, runs the read step again, and finishes it with every step's result,
// posting to Slack exactly once.
func TestWorkflowSurvivesACrash(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	eachDatabase(t, "switchboard.db", func(t *testing.T, dbURL string) { runWorkflowCrash(t, bin, dbURL) })
}

// mcpSession is an initialised mcp-go client of url, acting with the API key.
func mcpSession(t *testing.T, url, key string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatalf("MCP client for %s: %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "workflow-e2e", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize %s: %v", url, err)
	}
	return c
}

// callTool calls a tool and decodes its structured answer into out; a tool error is
// an error.
func callTool(ctx context.Context, c *client.Client, name string, args map[string]any, out any) error {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(res.StructuredContent)
	if res.StructuredContent == nil || err != nil {
		var text []string
		for _, ct := range res.Content {
			if tc, ok := ct.(mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return fmt.Errorf("%s answered no structured content (error %v): %s", name, res.IsError, strings.Join(text, " "))
	}
	if res.IsError {
		return fmt.Errorf("%s answered an error: %s", name, raw)
	}
	return json.Unmarshal(raw, out)
}

func runWorkflowCrash(t *testing.T, bin, dbURL string) {
	gh := newHeldGitHub(t)
	sl, slRec := fakeSlack(t)
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":    dbURL,
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_SLACK_BASE_URL":  sl.URL + "/api",
		"SWITCHBOARD_RUN_LEASE":       "2s",
	}
	first := startServer(t, bin, env)
	api := &apiClient{Base: first.BaseURL, Key: first.AdminKey}
	for _, conn := range []map[string]string{{"provider": "github", "token": githubToken}, {"provider": "slack", "token": slackToken}} {
		if status, body := api.Do(t, http.MethodPost, "/api/connections", conn); status != http.StatusCreated {
			t.Fatalf("connect %s: %d %s", conn["provider"], status, body)
		}
	}

	c := mcpSession(t, first.MCPURL, first.AdminKey)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var created struct {
		Status string `json:"status"`
		Tool   string `json:"tool"`
	}
	if err := callTool(ctx, c, "create_workflow", map[string]any{"definition": crashWorkflow}, &created); err != nil || created.Status != "created" || created.Tool != "run_flow__issue_to_slack" {
		t.Fatalf("create_workflow: %+v, %v", created, err)
	}

	// The call waits for the run while GitHub holds its read step; the crash ends it.
	callEnded := make(chan error, 1)
	go func() {
		var out map[string]any
		callEnded <- callTool(ctx, c, "run_workflow", map[string]any{"workflow_name": "issue_to_slack", "parameters": map[string]any{"number": githubIssueNum}}, &out)
	}()
	issuePath := fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum)
	if got := testwait.Recv(t, gh.arrived, "the workflow's read step to reach GitHub"); got != "GET "+issuePath {
		t.Fatalf("GitHub got %q first, want GET %s", got, issuePath)
	}
	// The tenant's MCP URL serves no run tools by default: the run is followed through
	// the REST API.
	var listed struct {
		Runs []struct {
			ID    string `json:"run_id"`
			Tool  string `json:"tool"`
			State string `json:"state"`
		} `json:"runs"`
	}
	if status, body := api.Do(t, http.MethodGet, "/api/runs", nil); status != http.StatusOK || json.Unmarshal(body, &listed) != nil {
		t.Fatalf("GET /api/runs: %d %s", status, body)
	}
	runID := ""
	for _, r := range listed.Runs {
		if r.Tool == "run_flow__issue_to_slack" && r.State == "working" {
			runID = r.ID
		}
	}
	if runID == "" {
		t.Fatalf("GET /api/runs lists no working run_flow__issue_to_slack run: %+v", listed.Runs)
	}

	first.Kill()
	if err := testwait.Recv(t, callEnded, "the run_workflow call to end with the process"); err == nil {
		t.Fatalf("run_workflow answered although the process was killed while its step was held")
	}
	second := startServer(t, bin, env)
	gh.release()

	api = &apiClient{Base: second.BaseURL, Key: first.AdminKey}
	type stepResult struct {
		StepName string         `json:"step_name"`
		Status   string         `json:"status"`
		Output   map[string]any `json:"output"`
	}
	var run struct {
		State  string `json:"state"`
		Output struct {
			Status         string         `json:"status"`
			Outputs        map[string]any `json:"outputs"`
			StepsCompleted int            `json:"steps_completed"`
			StepsTotal     int            `json:"steps_total"`
			StepResults    []stepResult   `json:"step_results"`
		} `json:"output"`
	}
	testwait.Until(t, "the resumed workflow run to end", func() bool {
		status, body := api.Do(t, http.MethodGet, "/api/runs/"+runID, nil)
		if err := json.Unmarshal(body, &run); status != http.StatusOK || err != nil {
			t.Fatalf("GET /api/runs/%s after the restart: %d %s", runID, status, body)
		}
		return run.State != "working"
	})
	out := run.Output
	if run.State != "completed" || out.Status != "success" || out.StepsCompleted != 2 || out.StepsTotal != 2 {
		t.Fatalf("the resumed run: %+v; want completed, success, 2 of 2 steps", run)
	}
	if out.Outputs["title"] != githubIssueTitle || out.Outputs["ts"] != slackTS {
		t.Errorf("outputs = %v; want title %q and ts %q", out.Outputs, githubIssueTitle, slackTS)
	}
	steps := map[string]stepResult{}
	for _, s := range out.StepResults {
		steps[s.StepName] = s
	}
	if s := steps["issue"]; s.Status != "completed" || s.Output["number"] != float64(githubIssueNum) || s.Output["title"] != githubIssueTitle {
		t.Errorf("step issue: %+v; want completed with issue %d", s, githubIssueNum)
	}
	if s := steps["post"]; s.Status != "completed" || s.Output["ts"] != slackTS {
		t.Errorf("step post: %+v; want completed with ts %s", s, slackTS)
	}

	gets := 0
	for _, call := range gh.calls() {
		if call == "GET "+issuePath {
			gets++
		} else {
			t.Errorf("GitHub got %s; the workflow sends only GET %s", call, issuePath)
		}
	}
	if gets != 2 {
		t.Errorf("GitHub got GET %s %d times, want 2 (once before the crash, once on resuming)", issuePath, gets)
	}
	var posts []received
	for _, r := range slRec.All() {
		if strings.HasSuffix(r.Path, "/chat.postMessage") {
			posts = append(posts, r)
		}
	}
	if len(posts) != 1 {
		t.Fatalf("Slack got %d chat.postMessage calls, want exactly 1: %+v", len(posts), posts)
	}
	text := fmt.Sprintf("Issue #%d: %s", githubIssueNum, githubIssueTitle)
	if want := (url.Values{"channel": {slackChannel}, "text": {text}}).Encode(); posts[0].Body != want {
		t.Errorf("chat.postMessage body = %s; want %s", posts[0].Body, want)
	}
}
