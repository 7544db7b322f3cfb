package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestShutdownDrainsCallsUnderWay sends SIGTERM to a real server while a tool call
// waits for GitHub: /readyz answers 503 at once while new calls are still served for
// SWITCHBOARD_DRAIN_LEAD (the balancer's time to notice), then a new call is refused
// with Retry-After, the call under way still gets its answer, and the process exits.
func TestShutdownDrainsCallsUnderWay(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	gh := newHeldGitHub(t)
	srv := startServer(t, bin, map[string]string{
		"SWITCHBOARD_DATABASE_URL":    "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db"),
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_DRAIN_TIMEOUT":   "2m",
		"SWITCHBOARD_DRAIN_LEAD":      "5s",
	})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	callArgs := map[string]any{"arguments": map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum}}
	type answer struct {
		status int
		body   []byte
	}
	inFlight := make(chan answer, 1)
	go func() {
		status, body := api.Do(t, http.MethodPost, "/api/tools/github_get_issue/call", callArgs)
		inFlight <- answer{status, body}
	}()
	select {
	case <-gh.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not reach GitHub")
	}

	exited := srv.Terminate()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := api.Do(t, http.MethodGet, "/readyz", nil)
		if status == http.StatusServiceUnavailable {
			if !strings.Contains(string(body), "this node is shutting down") {
				t.Errorf("/readyz while draining: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers %d %s after SIGTERM", status, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Within the lead, a call is still served although /readyz says 503.
	if status, body := api.Do(t, http.MethodPost, "/api/tools/github_get_me/call", map[string]any{"arguments": map[string]any{}}); status != http.StatusOK {
		t.Errorf("a call right after SIGTERM, within the drain lead: %d %s, want it served", status, body)
	}
	// After it, new calls are refused with Retry-After while the call under way drains.
	for {
		resp := postCall(t, srv, "github_get_me", map[string]any{"arguments": map[string]any{}})
		if resp.StatusCode == http.StatusServiceUnavailable {
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("a call while draining: 503 without Retry-After")
			}
			break
		}
		if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("a call after the drain lead: %d, want 200 until the lead ends, then 503 with Retry-After", resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}

	gh.release()
	got := testwait.Recv(t, inFlight, "the call under way at SIGTERM to be answered")
	var res struct {
		Result struct {
			Title string `json:"title"`
		} `json:"result"`
	}
	if got.status != http.StatusOK || json.Unmarshal(got.body, &res) != nil || res.Result.Title != githubIssueTitle {
		t.Errorf("the call under way at SIGTERM: %d %s, want its answer", got.status, got.body)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the server exited with %v after draining", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("the server did not exit after its calls drained")
	}
	if calls := gh.calls(); len(calls) != 1 {
		t.Errorf("GitHub got %q, want the one held call (get_me reads /user, which is not held; the refused calls never ran)", calls)
	}
}

// postCall posts a REST tool call with the admin key and returns the answer, its body
// read and closed.
func postCall(t *testing.T, srv *server, tool string, args map[string]any) *http.Response {
	t.Helper()
	req, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Timeout)
	defer cancel()
	hreq, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.BaseURL+"/api/tools/"+tool+"/call", strings.NewReader(string(req)))
	hreq.Header.Set("Authorization", "Bearer "+srv.AdminKey)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestDrainCutAnswersOutcomeUnknown sends SIGTERM to a real server while an MCP
// client's issue creation waits at GitHub past SWITCHBOARD_DRAIN_TIMEOUT: the call is
// stopped, and its client gets its JSON-RPC answer on the stream, a tool error saying
// the outcome is unknown (not a bare end of stream, not "canceled"); its audit row,
// read by the next server on the database, says outcome_unknown.
func TestDrainCutAnswersOutcomeUnknown(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	gh := newHeldGitHub(t)
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":    "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db"),
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_DRAIN_TIMEOUT":   "500ms",
	}
	srv := startServer(t, bin, env)
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	session := initSession(t, srv.MCPURL, srv.AdminKey)
	answer := make(chan string, 1)
	go func() {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github_create_issue","arguments":{"owner":"` + githubOwner + `","repo":"` + githubRepo + `","title":"Filed at the drain"}}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.MCPURL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.AdminKey)
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", mcpVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			b = append(b, []byte("\nread error: "+err.Error())...)
		}
		answer <- string(b)
	}()
	if got := testwait.Recv(t, gh.arrived, "the issue creation to reach GitHub"); !strings.HasPrefix(got, http.MethodPost) {
		t.Fatalf("GitHub got %q, want the creation", got)
	}
	exited := srv.Terminate()
	got := testwait.Recv(t, answer, "the cut call's answer")
	var res struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	found := false
	for _, line := range strings.Split(got, "\n") {
		data := strings.TrimPrefix(line, "data: ")
		if json.Unmarshal([]byte(data), &res) == nil && res.ID == 7 {
			found = true
			break
		}
	}
	if !found || !res.Result.IsError || len(res.Result.Content) == 0 || !strings.Contains(res.Result.Content[0].Text, "the outcome is unknown") {
		t.Fatalf("the cut call's answer: %q, want its JSON-RPC answer saying the outcome is unknown", got)
	}
	if err := testwait.Recv(t, exited, "the server to exit after the cut"); err != nil {
		t.Errorf("the server exited with %v", err)
	}
	next := startServer(t, bin, env)
	api = &apiClient{Base: next.BaseURL, Key: srv.AdminKey}
	status, body := api.Do(t, http.MethodGet, "/api/audit?kind=tool_call&tool=github_create_issue", nil)
	var page struct {
		Events []struct {
			Outcome string `json:"outcome"`
		} `json:"events"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Events) != 1 || page.Events[0].Outcome != "outcome_unknown" {
		t.Errorf("the cut call's audit rows: %d %s, want one, outcome_unknown", status, body)
	}
}
