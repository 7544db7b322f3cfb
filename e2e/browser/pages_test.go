package browser

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
)

// pagesWorkflow is the workflow TestBrowserPages saves through the API, so that its
// editor, the workflows list and a run page have something to show.
const pagesWorkflow = `name: triage_issue
description: Reads an issue
steps:
  - name: read
    tool: github_get_issue
    args: {owner: octo-org, repo: hello-world, issue_number: 1347}
`

// pagesNotesAPI is an API's OpenAPI description, added to the workspace by the admin.
const pagesNotesAPI = `openapi: 3.0.3
info: {title: Notes, version: "1"}
servers: [{url: "https://notes.example.test"}]
paths:
  /notes:
    get:
      operationId: listNotes
      summary: List notes
      responses: {"200": {description: The notes}}
`

// TestBrowserPages opens every page of the builder UI in Chromium (browser/pages.mjs)
// with data in each table, at a desktop width (1366 px) and a phone width (390 px),
// and checks the layout: each table header cell stands over its column's cells (or,
// where a narrow window turns rows into cards, each cell carries its heading), nothing
// reaches past the window's sides, and no short word (under 12 characters) is broken
// across lines. It saves a full-page screenshot of every page at both widths, in
// $SWITCHBOARD_SCREENSHOT_DIR when set, else under the test's temporary directory (the
// log says where), and runs axe-core on each. It then walks what a newcomer does
// after that: picking tools by provider, saving an agent, reading Activity, and
// signing in as a member, and reading Overview: the calls made, in figures, charts
// and top tools, per connection and per agent, light and dark.
func TestBrowserPages(t *testing.T) {
	t.Parallel()
	requireNode(t)
	requireChromium(t)
	dir := browserDir(t)
	npmtest.Install(t, dir)
	bin := buildServer(t)
	gh, _ := fakeGitHub(t)
	// The API added by its description below lives on loopback, which the hub refuses
	// unless told.
	// The usage rollup passes every second, so Overview shows the calls made below.
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL, "SWITCHBOARD_REMOTE_MCP_ALLOW_CIDRS": "127.0.0.1/32", "SWITCHBOARD_USAGE_INTERVAL": "1s"})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	must := mustAPI(t, api)

	// Something in every table: a connection, an agent with a key, API keys, a tool
	// call and a run in Activity, a workflow and its run, a pending invitation.
	var conn struct {
		ID string `json:"id"`
	}
	must(http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": githubToken, "shared": true}, http.StatusCreated, &conn)
	var agent struct {
		ID string `json:"id"`
	}
	must(http.MethodPost, "/api/agents", map[string]any{"name": "Issue reader", "instructions": "Read issues.",
		"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn.ID}, {"tool": "github_create_issue", "connection_id": conn.ID}}}, http.StatusCreated, &agent)
	must(http.MethodPost, "/api/agents/"+agent.ID+"/keys", map[string]string{"name": "laptop"}, http.StatusCreated, nil)
	must(http.MethodPost, "/api/keys", map[string]string{"name": "ci"}, http.StatusCreated, nil)
	args := map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum}
	must(http.MethodPost, "/api/tools/github_get_issue/call", map[string]any{"connection_id": conn.ID, "arguments": args}, http.StatusOK, nil)
	var run struct {
		RunID string `json:"run_id"`
	}
	must(http.MethodPost, "/api/runs", map[string]any{"tool": "github_get_issue", "connection_id": conn.ID, "arguments": args}, http.StatusAccepted, &run)
	must(http.MethodPost, "/api/workflows", map[string]any{"definition": pagesWorkflow}, http.StatusCreated, nil)
	var wfRun struct {
		ID    string `json:"id"`
		RunID string `json:"run_id"`
	}
	must(http.MethodPost, "/api/workflows/triage_issue/runs", map[string]any{"parameters": map[string]any{}}, http.StatusAccepted, &wfRun)
	// The connection renewed in place, once refused (another account's token) and once
	// taken: Activity lists both as reconnects.
	must(http.MethodPost, "/api/connections/"+conn.ID+"/reconnect", map[string]any{"token": githubBetaToken}, http.StatusBadRequest, nil)
	must(http.MethodPost, "/api/connections/"+conn.ID+"/reconnect", map[string]any{"token": githubRenewedToken}, http.StatusOK, nil)
	// An API added by its OpenAPI description, which a member sees listed but may not
	// delete.
	must(http.MethodPost, "/api/openapi-providers", map[string]any{"name": "notes", "base_url": gh.URL, "description": pagesNotesAPI}, http.StatusCreated, nil)
	must(http.MethodPost, "/api/invitations", map[string]string{"email": "newcomer@e2e.test", "role": "member"}, http.StatusCreated, nil)
	var inv struct {
		URL string `json:"url"`
	}
	must(http.MethodPost, "/api/invitations", map[string]string{"email": "member@e2e.test", "role": "member"}, http.StatusCreated, &inv)
	workflowRunID := wfRun.RunID
	if workflowRunID == "" {
		workflowRunID = wfRun.ID
	}

	shots := os.Getenv("SWITCHBOARD_SCREENSHOT_DIR")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "screenshots")
	}
	t.Logf("screenshots of every page, at 1366 and 390 px: %s", shots)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	var sum struct {
		OK          bool           `json:"ok"`
		Failures    []string       `json:"failures"`
		Steps       []string       `json:"steps"`
		Pages       []string       `json:"pages"`
		Screenshots []string       `json:"screenshots"`
		Axe         map[string]int `json:"axe"`
	}
	err, stderr := runScript(ctx, t, dir, "pages.mjs", []string{"BASE_URL=" + srv.BaseURL, "ADMIN_LINK=" + srv.AdminLink, "MEMBER_LINK=" + inv.URL, "SCREENSHOT_DIR=" + shots, "CHROMIUM=" + chromiumPath,
		"AGENT_ID=" + agent.ID, "CONNECTION_ID=" + conn.ID, "GITHUB_URL=" + gh.URL, "WORKFLOW_RUN_ID=" + workflowRunID}, &sum)
	t.Logf("pages.mjs steps: %s", strings.Join(sum.Steps, "; "))
	for _, f := range sum.Failures {
		t.Error(f)
	}
	if !sum.OK || err != nil {
		t.Fatalf("the browser run failed (exit %v)\nstderr:\n%s", err, stderr)
	}
	// Every page was laid out and photographed at both widths.
	for _, w := range []int{1366, 390} {
		for _, p := range sum.Pages {
			name := filepath.Join(shots, fmt.Sprintf("%d-%s.png", w, p))
			if st, err := os.Stat(name); err != nil || st.Size() < 1000 {
				t.Errorf("screenshot %s: %v", name, err)
			}
			if n, ok := sum.Axe[fmt.Sprintf("%d %s", w, p)]; !ok || n != 0 {
				t.Errorf("axe-core at %d px on %s: ran %v, %d serious or critical violations", w, p, ok, n)
			}
		}
	}
	if len(sum.Pages) < 12 {
		t.Errorf("laid out %d pages (%v), want every page", len(sum.Pages), sum.Pages)
	}
}
