package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
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

	seed := loadSeedTable(t)
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
	// cancel_workflow of a held flow answers seed 004's fields.
	extra := cl.call("b"+versions[0], "run_flow_async__issue_flow", issue)
	extraID, _ := extra.Structured["instance_id"].(string)
	canceled := seedAnswer(t, cl, seed, "a"+versions[0], "cancel_workflow", map[string]any{"workflow_id": extraID, "reason": "User requested"}, false)
	if canceled["status"] != "cancelled" {
		t.Errorf("cancel_workflow of a held flow = %v", canceled)
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
	// Seed 004's tools, through the TypeScript client: every parameter listed with its
	// type, every answer field with its type.
	for _, v := range versions {
		seedListed(t, cl, seed, "a"+v)
		created := seedAnswer(t, cl, seed, "a"+v, "create_workflow", map[string]any{"name": "issue_copy", "definition": strings.Replace(issueFlow, "name: issue_flow", "name: issue_copy", 1), "overwrite": true}, false)
		if created["workflow_path"] != "/api/workflows/issue_copy" {
			t.Errorf("%s: create_workflow = %v", v, created)
		}
		ran := seedAnswer(t, cl, seed, "a"+v, "run_workflow", map[string]any{"workflow_name": "issue_flow", "parameters": issue, "dry_run": false, "timeout": 1800, "parallel_limit": 4}, false)
		steps, _ := ran["step_results"].([]any)
		if ran["status"] != "success" || len(steps) != 2 {
			t.Fatalf("%s: run_workflow = %v", v, ran)
		}
		for _, step := range steps {
			seedFieldsIn(t, v+": run_workflow step result", step.(map[string]any), seed.StepResult)
		}
		seedAnswer(t, cl, seed, "a"+v, "list_workflows", map[string]any{"category": "", "include_running": true}, false)
	}
	posts := 0
	for _, r := range slRec.All() {
		if strings.HasSuffix(r.Path, "/chat.postMessage") {
			posts++
		}
	}
	if want := 4 * len(versions); posts != want {
		t.Errorf("Slack got %d posts, want %d (two followed flows, one waited for and one run_workflow per version)", posts, want)
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

// seedTable is workflows/testdata/seed004_fields.json: the parameters and answer
// fields of the orchestrator specification's tools, each [name, JSON type] ("" any).
type seedTable struct {
	Tools map[string]struct {
		In         [][2]string `json:"in"`
		Out        [][2]string `json:"out"`
		WhenFailed []string    `json:"when_failed"`
	} `json:"tools"`
	StepResult [][2]string `json:"step_result"`
}

func loadSeedTable(t *testing.T) seedTable {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(moduleRoot(t), "workflows", "testdata", "seed004_fields.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st seedTable
	if err := json.Unmarshal(raw, &st); err != nil || len(st.Tools) != 4 {
		t.Fatalf("seed004_fields.json: %v", err)
	}
	return st
}

// jsonType is a decoded JSON value's type as a schema names it.
func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// admits reports whether a value's or a schema's type (a string or a list) is typ; an
// integer is a number too, and "" admits any.
func admits(got any, typ string) bool {
	if typ == "" {
		return true
	}
	switch v := got.(type) {
	case string:
		return v == typ || typ == "number" && v == "integer"
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return admits(e, typ) })
	}
	return false
}

// seedFieldsIn checks that an answer holds each field with its type.
func seedFieldsIn(t *testing.T, what string, got map[string]any, fields [][2]string) {
	t.Helper()
	for _, f := range fields {
		if v, ok := got[f[0]]; !ok || !admits(jsonType(v), f[1]) {
			t.Errorf("%s answered %s = %v; want a %s in %v", what, f[0], v, f[1], got)
		}
	}
}

// seedAnswer calls one of seed 004's tools on session id and checks its answer's fields.
func seedAnswer(t *testing.T, cl *fleetClient, seed seedTable, id, tool string, args map[string]any, failed bool) map[string]any {
	t.Helper()
	r := cl.call(id, tool, args)
	if r.IsError {
		t.Fatalf("%s on %s: %s", tool, id, r.Text)
	}
	spec := seed.Tools[tool]
	var fields [][2]string
	for _, f := range spec.Out {
		if failed || !slices.Contains(spec.WhenFailed, f[0]) {
			fields = append(fields, f)
		}
	}
	seedFieldsIn(t, id+": "+tool, r.Structured, fields)
	return r.Structured
}

// seedListed checks that session id lists each of seed 004's tools with every
// parameter the specification names, with its type. The portable schema profile (the
// default) lists a free-form object as its JSON text, which the hub takes either way.
func seedListed(t *testing.T, cl *fleetClient, seed seedTable, id string) {
	t.Helper()
	var listed struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	cl.do("tools", map[string]any{"id": id}, &listed)
	for name, spec := range seed.Tools {
		i := slices.IndexFunc(listed.Tools, func(tl struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"inputSchema"`
		}) bool {
			return tl.Name == name
		})
		if i < 0 {
			t.Errorf("session %s does not list %s", id, name)
			continue
		}
		for _, f := range spec.In {
			p, ok := listed.Tools[i].InputSchema.Properties[f[0]]
			desc, _ := p["description"].(string)
			asText := f[1] == "object" && admits(p["type"], "string") && strings.Contains(desc, "JSON text of an object")
			if !ok || !admits(p["type"], f[1]) && !asText {
				t.Errorf("session %s lists %s's %s as %v; want type %s", id, name, f[0], p, f[1])
			}
		}
	}
}
