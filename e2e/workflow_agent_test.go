package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestAgentServesItsWorkflow: on the real binary, an agent whose tools include
// workflow_<name> lists exactly that tool at its URL and runs it against the fake
// GitHub and Slack; an agent without it lists no workflow tool; an agent naming an
// unknown workflow is refused at save, naming tools[i].tool.
func TestAgentServesItsWorkflow(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	gh, ghRec := fakeGitHub(t)
	sl, slRec := fakeSlack(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL, "SWITCHBOARD_SLACK_BASE_URL": sl.URL + "/api"})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	conns := map[string]string{}
	for provider, token := range map[string]string{"github": githubToken, "slack": slackToken} {
		status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": provider, "token": token})
		var c struct {
			ID string `json:"id"`
		}
		if status != http.StatusCreated || json.Unmarshal(body, &c) != nil {
			t.Fatalf("connect %s: %d %s", provider, status, body)
		}
		conns[provider] = c.ID
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var created struct {
		Status string `json:"status"`
	}
	if err := callTool(ctx, mcpSession(t, srv.MCPURL, srv.AdminKey), "create_workflow", map[string]any{"definition": crashWorkflow}, &created); err != nil || created.Status != "created" {
		t.Fatalf("create_workflow: %+v, %v", created, err)
	}

	status, body := api.Do(t, http.MethodPost, "/api/agents", map[string]any{"name": "Unknown", "tools": []map[string]string{
		{"tool": "github_get_issue", "connection_id": conns["github"]}, {"tool": "run_flow__nope"}}})
	var refused struct {
		Error struct {
			Code  string `json:"code"`
			Field string `json:"field"`
		} `json:"error"`
	}
	// No saved workflow is named so, so it is taken for a tool of a connection, which
	// needs one.
	if err := json.Unmarshal(body, &refused); status != http.StatusBadRequest || err != nil || refused.Error.Field != "tools[1].connection_id" {
		t.Errorf("an agent naming run_flow__nope: %d %s; want 400 naming tools[1].connection_id", status, body)
	}

	agentSession := func(name string, tools []map[string]string) *client.Client {
		t.Helper()
		status, body := api.Do(t, http.MethodPost, "/api/agents", map[string]any{"name": name, "tools": tools})
		var agent struct {
			ID string `json:"id"`
		}
		if status != http.StatusCreated || json.Unmarshal(body, &agent) != nil {
			t.Fatalf("create agent %s: %d %s", name, status, body)
		}
		status, body = api.Do(t, http.MethodPost, "/api/agents/"+agent.ID+"/keys", map[string]string{"name": name})
		var key struct {
			Key string `json:"key"`
		}
		if status != http.StatusCreated || json.Unmarshal(body, &key) != nil {
			t.Fatalf("create a key of agent %s: %d %s", name, status, redactKey(string(body)))
		}
		return mcpSession(t, srv.BaseURL+"/mcp/default/agents/"+agent.ID, key.Key)
	}
	listed := func(c *client.Client) []string {
		t.Helper()
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names
	}

	plain := agentSession("Plain", []map[string]string{{"tool": "github_get_issue", "connection_id": conns["github"]}})
	if names := listed(plain); !slices.Equal(names, []string{"github_get_issue"}) {
		t.Errorf("the agent without workflows lists %q; want github_get_issue alone", names)
	}
	// A workflow runs for an agent on the agent's own tools: its steps' tools are
	// selected too, each on the connection the steps use.
	flows := agentSession("Flows", []map[string]string{{"tool": "github_get_issue", "connection_id": conns["github"]},
		{"tool": "slack_post_message", "connection_id": conns["slack"]}, {"tool": "run_flow__issue_to_slack"}})
	if names := listed(flows); !slices.Equal(names, []string{"github_get_issue", "run_flow__issue_to_slack", "slack_post_message"}) {
		t.Fatalf("the agent with run_flow__issue_to_slack lists %q; want github_get_issue, run_flow__issue_to_slack and slack_post_message", names)
	}
	var refusedRun struct {
		Status       string `json:"status"`
		ErrorMessage string `json:"error_message"`
	}
	// Without a step's tool, the agent's run of the workflow is refused, naming it.
	partial := agentSession("Partial", []map[string]string{{"tool": "github_get_issue", "connection_id": conns["github"]}, {"tool": "run_flow__issue_to_slack"}})
	if err := callTool(ctx, partial, "run_flow__issue_to_slack", map[string]any{"number": githubIssueNum}, &refusedRun); err == nil {
		t.Errorf("the agent without slack_post_message ran run_flow__issue_to_slack: %+v", refusedRun)
	} else if !strings.Contains(err.Error(), "slack_post_message is not one of this agent's tools") {
		t.Errorf("the agent without slack_post_message: %v; want the refusal to name slack_post_message", err)
	}
	var run struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Output map[string]any `json:"output"`
	}
	if err := callTool(ctx, flows, "run_flow__issue_to_slack", map[string]any{"number": githubIssueNum}, &run); err != nil || run.Status.State != "completed" || run.Output["ts"] != slackTS || run.Output["title"] != githubIssueTitle {
		t.Fatalf("run_flow__issue_to_slack at the agent URL: %+v, %v", run, err)
	}
	gets, posts := 0, 0
	for _, r := range ghRec.All() {
		if r.Method == http.MethodGet && r.Path == fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum) {
			gets++
		}
	}
	for _, r := range slRec.All() {
		if strings.HasSuffix(r.Path, "/chat.postMessage") {
			posts++
		}
	}
	if gets != 1 || posts != 1 {
		t.Errorf("the agent's run sent %d issue reads to GitHub and %d posts to Slack; want 1 and 1", gets, posts)
	}
}
