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

// TestBrowserConsole drives the agent console and the workflow editor's help in
// Chromium (browser/console.mjs): the console of an agent whose policy confirms every
// call lists what the agent's MCP URL lists to its key, and calls github_get_issue
// through it, the hub's confirmation shown in the page, declined (GitHub gets nothing)
// then accepted (GitHub gets the one request); the editor completes tool names,
// connection labels and argument names, a dry run names every problem of a definition
// at once and the accounts of a good one. Each state is laid out, photographed and
// checked by axe-core at 1366 and 390 px, light and dark.
func TestBrowserConsole(t *testing.T) {
	t.Parallel()
	requireNode(t)
	requireChromium(t)
	dir := browserDir(t)
	npmtest.Install(t, dir)
	bin := buildServer(t)
	gh, rec := fakeGitHub(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	must := mustAPI(t, api)
	var conn struct {
		ID    string `json:"id"`
		Label string `json:"account_label"`
	}
	must(http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": githubToken, "shared": true}, http.StatusCreated, &conn)
	var agent struct {
		ID string `json:"id"`
	}
	must(http.MethodPost, "/api/agents", map[string]any{"name": "Console bot", "confirm": "always", "run_tools": "off",
		"tools": []map[string]string{{"tool": "github_get_issue", "connection_id": conn.ID}, {"tool": "github_create_issue", "connection_id": conn.ID}}}, http.StatusCreated, &agent)
	var key struct {
		Key    string `json:"key"`
		MCPURL string `json:"mcp_url"`
	}
	must(http.MethodPost, "/api/agents/"+agent.ID+"/keys", map[string]string{"name": "console test"}, http.StatusCreated, &key)
	// The agent URL as this server answers it (its public URL may name another host).
	agentURL := srv.BaseURL + key.MCPURL[strings.Index(key.MCPURL, "/mcp/"):]

	shots := os.Getenv("SWITCHBOARD_SCREENSHOT_DIR")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "screenshots")
	}
	t.Logf("screenshots of the console and the editor, at 1366 and 390 px: %s", shots)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	var sum struct {
		OK       bool           `json:"ok"`
		Failures []string       `json:"failures"`
		Steps    []string       `json:"steps"`
		Pages    []string       `json:"pages"`
		Axe      map[string]int `json:"axe"`
		Console  struct {
			Listed   []string `json:"listed"`
			Declined bool     `json:"declined"`
			Accepted bool     `json:"accepted"`
		} `json:"console"`
		Editor struct {
			Completed bool     `json:"completed"`
			Problems  []string `json:"problems"`
			Accounts  []string `json:"accounts"`
		} `json:"editor"`
	}
	err, stderr := runScript(ctx, t, dir, "console.mjs", []string{"BASE_URL=" + srv.BaseURL, "ADMIN_LINK=" + srv.AdminLink, "SCREENSHOT_DIR=" + shots, "CHROMIUM=" + chromiumPath,
		"AGENT_ID=" + agent.ID, "AGENT_URL=" + agentURL, "AGENT_KEY=" + key.Key, "ACCOUNT_LABEL=" + conn.Label, "ISSUE_TITLE=" + githubIssueTitle}, &sum)
	t.Logf("console.mjs steps: %s", strings.Join(sum.Steps, "; "))
	for _, f := range sum.Failures {
		t.Error(f)
	}
	if !sum.OK || err != nil {
		t.Fatalf("the browser run failed (exit %v)\nstderr:\n%s", err, stderr)
	}
	if !sum.Console.Declined || !sum.Console.Accepted || !sum.Editor.Completed || len(sum.Editor.Problems) < 5 || len(sum.Editor.Accounts) != 2 {
		t.Errorf("console.mjs reported %+v %+v", sum.Console, sum.Editor)
	}
	// The declined call sent GitHub nothing; the accepted one its one request.
	issue := fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum)
	gets := 0
	for _, r := range rec.All() {
		if r.Method == http.MethodGet && r.Path == issue {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("GitHub got %d GET %s, want 1: the accepted call only", gets, issue)
	}
	// Every state was laid out and photographed at both widths, light and dark, with no
	// serious or critical axe-core violation.
	for _, p := range sum.Pages {
		for _, w := range []int{1366, 390} {
			for _, name := range []string{p, p + "-dark"} {
				if st, err := os.Stat(filepath.Join(shots, fmt.Sprintf("%d-%s.png", w, name))); err != nil || st.Size() < 1000 {
					t.Errorf("screenshot %d-%s: %v", w, name, err)
				}
				if n, ok := sum.Axe[fmt.Sprintf("%d %s", w, name)]; !ok || n != 0 {
					t.Errorf("axe-core at %d px on %s: ran %v, %d serious or critical violations", w, name, ok, n)
				}
			}
		}
	}
	if len(sum.Pages) != 5 {
		t.Errorf("laid out %v, want the console, its confirmation and result, the editor's suggestions and problems", sum.Pages)
	}
	if n, ok := sum.Axe["workflow-plan"]; !ok || n != 0 {
		t.Errorf("axe-core on the dry run's plan: ran %v, %d violations", ok, n)
	}
}
