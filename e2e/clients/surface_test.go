package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// blockingGitHub is a fake GitHub for TestMCPSurface: GET /user answers for the tokens
// of githubAccounts, and GET /repos/{owner}/{repo}/issues/{n} holds the request until
// the caller gives up, recording that its context was cancelled (what
// notifications/cancelled must cause).
type blockingGitHub struct {
	*httptest.Server
	mu        sync.Mutex
	started   []string
	cancelled []string
}

func newBlockingGitHub(t *testing.T) *blockingGitHub {
	t.Helper()
	f := &blockingGitHub{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_test/started" { // for surface.mjs: how many calls are held here
			started, _ := f.seen()
			writeJSON(w, http.StatusOK, map[string]int{"started": len(started)})
			return
		}
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		login, ok := githubAccounts[token]
		if !ok {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
			return
		}
		w.Header().Set("X-OAuth-Scopes", githubFakeScopes)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/user":
			writeJSON(w, http.StatusOK, githubUser(login))
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/repos/"+githubOwner+"/"+githubRepo+"/issues/"):
			f.mu.Lock()
			f.started = append(f.started, r.URL.Path)
			f.mu.Unlock()
			select {
			case <-r.Context().Done():
				f.mu.Lock()
				f.cancelled = append(f.cancelled, r.URL.Path)
				f.mu.Unlock()
			case <-time.After(60 * time.Second):
				writeJSON(w, http.StatusGatewayTimeout, map[string]string{"message": "the test never cancelled"})
			}
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *blockingGitHub) seen() (started, cancelled []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...), append([]string(nil), f.cancelled...)
}

// surfaceSummary is surface.mjs's summary line.
type surfaceSummary struct {
	OK                  bool     `json:"ok"`
	Failures            []string `json:"failures"`
	AgentTools          []string `json:"agent_tools"`
	AgentToolsAfterEdit []string `json:"agent_tools_after_edit"`
	TenantToolCount     int      `json:"tenant_tool_count"`
	ConnectionEnum      []string `json:"connection_enum"`
	OtherListChanged    int      `json:"other_list_changed"`
	CancelledCall       string   `json:"cancelled_call"`
}

// TestMCPSurface drives a live server with the official TypeScript client
// (e2e/client/surface.mjs): an agent URL lists only its tools, an agent edit and a new
// connection send tools/list_changed to that tenant's live sessions only, and a
// cancelled call cancels its upstream request.
func TestMCPSurface(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	gh := newBlockingGitHub(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}

	status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": githubToken, "shared": true})
	if status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	var conn struct {
		ID string `json:"id"`
	}
	mustJSON(t, body, &conn)
	status, body = api.Do(t, http.MethodPost, "/api/agents", map[string]any{
		"name": "Filer", "instructions": "File issues.", "tools": []map[string]string{{"tool": "github_create_issue", "connection_id": conn.ID}},
	})
	if status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", status, body)
	}
	var agent struct {
		ID     string `json:"id"`
		MCPURL string `json:"mcp_url"`
	}
	mustJSON(t, body, &agent)
	if want := srv.BaseURL + "/mcp/default/agents/" + agent.ID; agent.MCPURL != want {
		t.Errorf("agent mcp_url = %q, want %q", agent.MCPURL, want)
	}
	status, body = api.Do(t, http.MethodPost, "/api/agents/"+agent.ID+"/keys", map[string]string{"name": "surface"})
	if status != http.StatusCreated {
		t.Fatalf("create agent key: %d %s", status, redactKey(string(body)))
	}
	var agentKey struct {
		Key string `json:"key"`
	}
	mustJSON(t, body, &agentKey)
	status, body = api.Do(t, http.MethodPost, "/api/tenants", map[string]string{"slug": "beta", "name": "Beta", "owner_email": "owner@beta.test"})
	if status != http.StatusCreated {
		t.Fatalf("create tenant beta: %d %s", status, redactKey(string(body)))
	}
	var beta struct {
		APIKey struct {
			Key string `json:"key"`
		} `json:"api_key"`
	}
	mustJSON(t, body, &beta)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "node", filepath.Join(clientDir(t), "surface.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(),
		"BASE_URL="+srv.BaseURL, "ADMIN_KEY="+srv.AdminKey, "TENANT_URL="+srv.MCPURL,
		"AGENT_URL="+agent.MCPURL, "AGENT_KEY="+agentKey.Key, "AGENT_ID="+agent.ID, "CONNECTION_ID="+conn.ID,
		"OTHER_URL="+srv.BaseURL+"/mcp/beta", "OTHER_KEY="+beta.APIKey.Key, "NEW_TOKEN="+githubBetaToken,
		"GH_OWNER="+githubOwner, "GH_REPO="+githubRepo, "GH_FAKE_URL="+gh.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run surface.mjs: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var s surfaceSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("surface.mjs printed no summary: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("surface.mjs summary: %s", lines[len(lines)-1])
	if !s.OK || err != nil {
		t.Errorf("surface.mjs failed:\n  %s\nstderr:\n%s", strings.Join(s.Failures, "\n  "), stderr.String())
	}
	if len(s.AgentTools) != 1 || s.AgentTools[0] != "github_create_issue" || s.TenantToolCount < 2 || len(s.ConnectionEnum) != 2 || s.OtherListChanged != 0 {
		t.Errorf("summary %+v", s)
	}
	// The aborted call reached the fake, and the fake saw its request cancelled.
	deadline := time.Now().Add(10 * time.Second)
	for {
		started, cancelled := gh.seen()
		if len(started) == 1 && len(cancelled) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream requests started %v, cancelled %v; want the one aborted call started and cancelled", started, cancelled)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, secret := range []string{githubToken, githubBetaToken} {
		if strings.Contains(stdout.String()+stderr.String()+srv.Stdout.String()+srv.Stderr.String(), secret) {
			t.Errorf("a GitHub token appears in the output")
		}
	}
}
