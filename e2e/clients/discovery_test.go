package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// discoverySummary is discovery.mjs's summary line.
type discoverySummary struct {
	OK            bool     `json:"ok"`
	Failures      []string `json:"failures"`
	OAuthRequests []string `json:"oauth_requests"`
	PlainError    string   `json:"plain_error"`
}

// TestOAuthDiscovery drives a live server with the official TypeScript SDK's OAuth
// client provider (e2e/client/discovery.mjs): the SDK discovers the protected resource
// metadata of the tenant and an agent URL (none for the agent under another tenant's
// URL), registers, is sent to the authorization step, whose consent page a signed-in
// person answers over HTTP, exchanges the code and lists tools with the access token,
// which another tenant's URL refuses; the refresh token works once. A plain client
// with a wrong key reads that the key is invalid.
func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	srv := startServer(t, bin, nil)
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	status, body := api.Do(t, http.MethodPost, "/api/agents", map[string]any{"name": "Empty", "instructions": "Nothing yet.", "tools": []any{}})
	if status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", status, body)
	}
	var agent struct {
		ID     string `json:"id"`
		MCPURL string `json:"mcp_url"`
	}
	mustJSON(t, body, &agent)
	status, body = api.Do(t, http.MethodPost, "/api/tenants", map[string]string{"slug": "beta", "name": "Beta", "owner_email": "owner@beta.test"})
	if status != http.StatusCreated {
		t.Fatalf("create tenant beta: %d %s", status, redactKey(string(body)))
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := testproc.Command(ctx, "node", filepath.Join(clientDir(t), "discovery.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "TENANT_URL="+srv.MCPURL, "AGENT_URL="+agent.MCPURL,
		"FOREIGN_URL="+srv.BaseURL+"/mcp/beta/agents/"+agent.ID, "OTHER_URL="+srv.BaseURL+"/mcp/beta", "WRONG_KEY=sbk_not_a_key_of_this_hub",
		"ADMIN_LINK="+srv.AdminLink)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run discovery.mjs: %v\n%s", err, stderr.String())
	}
	var s discoverySummary
	line := strings.TrimSpace(stdout.String())
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("discovery.mjs printed no summary (%v): stdout %q stderr %s", err, line, stderr.String())
	}
	for _, f := range s.Failures {
		t.Errorf("discovery.mjs: %s", f)
	}
	if !s.OK {
		t.Errorf("discovery.mjs failed: %s", line)
	}
	t.Logf("the OAuth client made %v", s.OAuthRequests)
}
