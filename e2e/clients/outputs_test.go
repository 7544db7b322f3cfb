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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// minimalUpstream is a fake upstream that answers each path with the least answer the
// API description allows for its operation (providertest MinimalResponse).
func minimalUpstream(t *testing.T, desc *providertest.APIDescription, ops map[string]string) *httptest.Server {
	t.Helper()
	bodies := map[string][]byte{}
	for path, op := range ops {
		bodies[path] = desc.MinimalResponse(t, op, http.StatusOK)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			t.Errorf("fake upstream: unexpected %s %s", r.Method, r.URL.Path)
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTypeScriptClientAcceptsMinimalAnswers: the official TypeScript client validates
// structuredContent against the outputSchema of tools/list and throws -32602 when it
// does not match. Against a GitHub and a Slack that give the least answers their
// descriptions allow (an issue without its optional fields, a chat.delete answer with
// only channel and ts), every call must be accepted with its structuredContent.
func TestTypeScriptClientAcceptsMinimalAnswers(t *testing.T) {
	t.Parallel()
	requireNode(t)
	ensureClientPackages(t)
	bin := buildServer(t)
	gh := minimalUpstream(t, providertest.GitHubDescription(t), map[string]string{
		"/user":                        "users/get-authenticated",
		"/repos/octo/hello/issues/1":   "issues/get",
		"/repos/octo/hello/issues":     "issues/list-for-repo",
		"/repos/octo/hello/pulls/2":    "pulls/get",
		"/repos/octo/hello/releases":   "repos/list-releases",
		"/repos/octo/hello":            "repos/get",
		"/repos/octo/hello/commits/ab": "repos/get-commit",
	})
	sl := minimalUpstream(t, providertest.SlackDescription(t), map[string]string{
		"/api/auth.test":             "auth_test",
		"/api/chat.delete":           "chat_delete",
		"/api/chat.postMessage":      "chat_postMessage",
		"/api/chat.update":           "chat_update",
		"/api/conversations.history": "conversations_history",
		"/api/conversations.list":    "conversations_list",
		"/api/users.list":            "users_list",
	})
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL, "SWITCHBOARD_SLACK_BASE_URL": sl.URL + "/api"})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	for _, c := range []map[string]any{{"provider": "github", "token": githubToken}, {"provider": "slack", "token": slackToken}} {
		if status, body := api.Do(t, http.MethodPost, "/api/connections", c); status != http.StatusCreated {
			t.Fatalf("connect %s: %d %s", c["provider"], status, body)
		}
	}
	repo := map[string]any{"owner": "octo", "repo": "hello"}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	const ch, ts = "C012AB3CD", "1712345678.123456"
	calls := []map[string]any{
		{"name": "github_get_me", "arguments": map[string]any{}},
		{"name": "github_get_issue", "arguments": with(repo, "issue_number", 1)},
		{"name": "github_list_issues", "arguments": repo},
		{"name": "github_get_pull_request", "arguments": with(repo, "pull_number", 2)},
		{"name": "github_list_releases", "arguments": repo},
		{"name": "github_get_repository", "arguments": repo},
		{"name": "github_get_commit", "arguments": with(repo, "ref", "ab")},
		{"name": "slack_delete_message", "arguments": map[string]any{"channel": ch, "ts": ts}},
		{"name": "slack_post_message", "arguments": map[string]any{"channel": ch, "text": "hi"}},
		{"name": "slack_update_message", "arguments": map[string]any{"channel": ch, "ts": ts, "text": "hi"}},
		{"name": "slack_get_channel_history", "arguments": map[string]any{"channel": ch}},
		{"name": "slack_list_channels", "arguments": map[string]any{}},
		{"name": "slack_get_users", "arguments": map[string]any{}},
	}
	raw, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(clientDir(t), "outputs.mjs"))
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "MCP_URL="+srv.MCPURL, "KEY="+srv.AdminKey, "CALLS="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("run outputs.mjs: %v\n%s", err, stderr.String())
		}
		t.Errorf("outputs.mjs exited %d\nstderr:\n%s", exit.ExitCode(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var s struct {
		WithOutputSchema []string `json:"with_output_schema"`
		Calls            map[string]struct {
			Accepted   bool   `json:"accepted"`
			IsError    bool   `json:"isError"`
			Structured bool   `json:"structured"`
			Text       string `json:"text"`
			Code       *int   `json:"code"`
			Message    string `json:"message"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("outputs.mjs printed no summary: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("outputs.mjs summary: %s", lines[len(lines)-1])
	for _, c := range calls {
		name := c["name"].(string)
		got, ok := s.Calls[name]
		switch {
		case !slices.Contains(s.WithOutputSchema, name):
			t.Errorf("%s: tools/list gave no outputSchema, so the client validated nothing", name)
		case !ok:
			t.Errorf("%s: not called", name)
		case !got.Accepted:
			t.Errorf("%s: the client refused the result: %v %s", name, got.Code, got.Message)
		case got.IsError || !got.Structured:
			t.Errorf("%s: isError %v, structuredContent %v: %s", name, got.IsError, got.Structured, got.Text)
		}
	}
}
