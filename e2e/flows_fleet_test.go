package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// issueFlow is crashWorkflow with typed outputs: its flow tools' output schemas say
// what its output holds.
const issueFlow = `name: issue_flow
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
output_schema:
  type: object
  properties:
    title: {type: string}
    ts: {type: string}
`

// flowTool is a tool as the TypeScript client lists it.
type flowTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Meta         map[string]any `json:"_meta"`
	OutputSchema map[string]any `json:"outputSchema"`
}

// TestFlowsAcrossNodes runs two real `switchboard serve` nodes on one PostgreSQL
// database and drives them with the official TypeScript MCP client on each protocol
// version it speaks: a saved workflow is listed as seed 000's trio (and its
// versioned trio) with _meta and output schemas typed by its outputs; flows started
// on node B (held at the fake GitHub) are followed from a session on node A, by
// resources/subscribe and by subscribe_flow, which hears
// notifications/resources/updated when they end, reads their resource, and queries
// their typed output; run_flow__ waits for the end; a workflow deactivated, activated
// and deleted through one node tells every session on both nodes (list_changed), its
// tools say [DEACTIVATED] or [DELETED], and a call of them answers a clear tool error.
func TestFlowsAcrossNodes(t *testing.T) {
	t.Parallel()
	base := requireFleetDatabase(t)
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	dbURL, _ := freshPostgres(t, base)
	gh := newHeldGitHub(t)
	go func() { // the held GitHub notes every request; nobody waits for them here
		for range gh.arrived {
		}
	}()
	sl, slRec := fakeSlack(t)
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":    dbURL,
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "keys", "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_SLACK_BASE_URL":  sl.URL + "/api",
		"SWITCHBOARD_LOG_LEVEL":       "warn",
	}
	nodes := []*server{startServer(t, bin, env)}
	admin := nodes[0].AdminKey
	nodes = append(nodes, startServer(t, bin, env))
	api := func(n int) *apiClient { return &apiClient{Base: nodes[n].BaseURL, Key: admin} }
	const nodeA, nodeB = 0, 1
	for provider, token := range map[string]string{"github": githubToken, "slack": slackToken} {
		if status, body := api(nodeA).Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": provider, "token": token}); status != http.StatusCreated {
			t.Fatalf("connect %s: %d %s", provider, status, body)
		}
	}
	if status, body := api(nodeA).Do(t, http.MethodPost, "/api/workflows", map[string]string{"definition": issueFlow}); status != http.StatusCreated {
		t.Fatalf("save issue_flow: %d %s", status, body)
	}

	cl := startFleetClient(t)
	versions := []string{"2025-03-26", "2025-06-18", "2025-11-25"}
	for _, v := range versions {
		for i, side := range []string{"a", "b"} {
			cl.do("open", map[string]any{"id": side + v, "url": nodes[i].BaseURL + "/mcp/default", "key": admin, "protocolVersion": v}, nil)
			var got struct{ Version string }
			cl.do("version", map[string]any{"id": side + v}, &got)
			if got.Version != v {
				t.Fatalf("node %d answered protocol version %q to a client asking for %s", i, got.Version, v)
			}
		}
	}

	// The trio and its versioned trio, with _meta and the flow's own output schema.
	for _, v := range versions {
		var listed struct{ Tools []flowTool }
		cl.do("tools", map[string]any{"id": "a" + v}, &listed)
		byName := map[string]flowTool{}
		for _, tl := range listed.Tools {
			byName[tl.Name] = tl
		}
		for name, kind := range map[string]string{"run_flow__issue_flow": "run_flow", "run_flow_async__issue_flow": "run_flow_async", "query_flow__issue_flow": "query_flow",
			"run_flow__issue_flow_1": "run_flow", "run_flow_async__issue_flow_1": "run_flow_async", "query_flow__issue_flow_1": "query_flow"} {
			tl, ok := byName[name]
			if !ok {
				t.Fatalf("%s: the session lists no %s", v, name)
			}
			if tl.Meta["kind"] != kind || tl.Meta["model_name"] != "issue_flow" || tl.Meta["version"] != "1" || tl.Meta["model_id"] == nil || tl.Meta["model_id"] == "" {
				t.Errorf("%s: %s _meta = %v", v, name, tl.Meta)
			}
		}
		if v == "2025-03-26" {
			continue // output schemas came with 2025-06-18
		}
		query := byName["query_flow__issue_flow"].OutputSchema
		props, _ := query["properties"].(map[string]any)
		out, _ := props["output"].(map[string]any)
		outProps, _ := out["properties"].(map[string]any)
		title, _ := outProps["title"].(map[string]any)
		status, _ := props["status"].(map[string]any)
		if title["type"] != "string" || fmt.Sprint(status["required"]) != "[instance_id name state created_at updated_at]" {
			t.Errorf("%s: query_flow__issue_flow's output schema = %v", v, query)
		}
	}

	// Flows started on node B, held at GitHub, followed from node A.
	issue := map[string]any{"number": githubIssueNum}
	subscribed, followed := map[string]string{}, map[string]string{}
	for _, v := range versions {
		for _, into := range []map[string]string{subscribed, followed} {
			r := cl.call("b"+v, "run_flow_async__issue_flow", issue)
			id, _ := r.Structured["instance_id"].(string)
			if r.IsError || id == "" {
				t.Fatalf("%s: run_flow_async__issue_flow on node B = %+v", v, r)
			}
			into[v] = id
		}
		cl.do("subscribe", map[string]any{"id": "a" + v, "uri": "switchboard://flows/" + subscribed[v]}, nil)
		r := cl.call("a"+v, "subscribe_flow", map[string]any{"instance_id": followed[v]})
		if r.IsError || r.Structured["subscribed"] != true || r.Structured["uri"] != "switchboard://flows/"+followed[v] {
			t.Fatalf("%s: subscribe_flow on node A = %+v", v, r)
		}
		q := cl.call("a"+v, "query_flow__issue_flow", map[string]any{"instance_id": subscribed[v]})
		if st, _ := q.Structured["status"].(map[string]any); q.IsError || st["state"] != "working" || q.Structured["output"] != nil {
			t.Errorf("%s: query_flow__issue_flow of a held flow = %+v", v, q)
		}
	}
	gh.release()
	for _, v := range versions {
		for _, id := range []string{subscribed[v], followed[v]} {
			uri := "switchboard://flows/" + id
			var w struct {
				TimedOut bool     `json:"timedOut"`
				Updated  []string `json:"updated"`
			}
			cl.do("waitUpdated", map[string]any{"id": "a" + v, "uri": uri, "timeoutMs": 30000}, &w)
			if w.TimedOut {
				t.Fatalf("%s: the session on node A heard no notifications/resources/updated for %s within 30 s (it heard %v)", v, uri, w.Updated)
			}
			var read struct {
				Contents []struct{ URI, Text string }
			}
			cl.do("read", map[string]any{"id": "a" + v, "uri": uri}, &read)
			var ans struct {
				Output map[string]any `json:"output"`
				Status struct {
					InstanceID string `json:"instance_id"`
					Name       string `json:"name"`
					State      string `json:"state"`
				} `json:"status"`
			}
			if len(read.Contents) != 1 || json.Unmarshal([]byte(read.Contents[0].Text), &ans) != nil || ans.Status.InstanceID != id ||
				ans.Status.Name != "issue_flow" || ans.Status.State != "completed" || ans.Output["title"] != githubIssueTitle {
				t.Errorf("%s: %s reads %+v", v, uri, read)
			}
		}
		q := cl.call("a"+v, "query_flow__issue_flow", map[string]any{"instance_id": followed[v]})
		if out, _ := q.Structured["output"].(map[string]any); q.IsError || out["title"] != githubIssueTitle || out["ts"] != slackTS {
			t.Errorf("%s: query_flow__issue_flow of the ended flow = %+v", v, q)
		}
		r := cl.call("a"+v, "run_flow__issue_flow", issue)
		if out, _ := r.Structured["output"].(map[string]any); r.IsError || out["title"] != githubIssueTitle {
			t.Errorf("%s: run_flow__issue_flow = %+v", v, r)
		}
	}
	posts := 0
	for _, r := range slRec.All() {
		if strings.HasSuffix(r.Path, "/chat.postMessage") {
			posts++
		}
	}
	if want := 3 * len(versions); posts != want {
		t.Errorf("Slack got %d posts, want %d (two followed flows and one waited for per version)", posts, want)
	}

	// Lifecycle, changed through one node, heard on both.
	sessions := []string{}
	for _, v := range versions {
		sessions = append(sessions, "a"+v, "b"+v)
	}
	lifecycle := func(n int, method, path, marker, refusal string) {
		t.Helper()
		before := map[string]int{}
		for _, id := range sessions {
			before[id] = cl.changed(id)
		}
		if status, body := api(n).Do(t, method, path, nil); status >= 300 {
			t.Fatalf("%s %s on node %d: %d %s", method, path, n, status, body)
		}
		for _, id := range sessions {
			cl.waitChanged(id, before[id], method+" "+path)
		}
		for _, id := range []string{"a" + versions[0], "b" + versions[len(versions)-1]} {
			var listed struct{ Tools []flowTool }
			cl.do("tools", map[string]any{"id": id}, &listed)
			i := slices.IndexFunc(listed.Tools, func(tl flowTool) bool { return tl.Name == "run_flow__issue_flow" })
			if i < 0 {
				t.Fatalf("after %s %s, session %s lists no run_flow__issue_flow", method, path, id)
			}
			if desc := listed.Tools[i].Description; marker != "" && !strings.HasPrefix(desc, marker+" ") || marker == "" && strings.HasPrefix(desc, "[") {
				t.Errorf("after %s %s, session %s describes run_flow__issue_flow as %q", method, path, id, desc)
			}
			r := cl.call(id, "run_flow__issue_flow", issue)
			if refusal == "" && r.IsError || refusal != "" && (!r.IsError || !strings.Contains(r.Text, refusal)) {
				t.Errorf("after %s %s, run_flow__issue_flow on session %s = %+v", method, path, id, r)
			}
		}
	}
	lifecycle(nodeB, http.MethodPost, "/api/workflows/issue_flow/deactivate", "[DEACTIVATED]", "flow issue_flow is deactivated")
	lifecycle(nodeA, http.MethodPost, "/api/workflows/issue_flow/activate", "", "")
	lifecycle(nodeA, http.MethodDelete, "/api/workflows/issue_flow", "[DELETED]", "flow issue_flow was deleted")
}
