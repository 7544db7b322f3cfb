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
	api := &apiClient{base: srv.BaseURL, key: srv.AdminKey}
	if status, body := api.do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	callArgs := map[string]any{"arguments": map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum}}
	type answer struct {
		status int
		body   []byte
	}
	inFlight := make(chan answer, 1)
	go func() {
		status, body := api.do(t, http.MethodPost, "/api/tools/github_get_issue/call", callArgs)
		inFlight <- answer{status, body}
	}()
	select {
	case <-gh.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not reach GitHub")
	}

	exited := srv.terminate()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := api.do(t, http.MethodGet, "/readyz", nil)
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
	if status, body := api.do(t, http.MethodPost, "/api/tools/github_get_me/call", map[string]any{"arguments": map[string]any{}}); status != http.StatusOK {
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
