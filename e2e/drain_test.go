package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestShutdownDrainsCallsUnderWay sends SIGTERM to a real server while a tool call
// waits for GitHub: /readyz answers 503 at once, a new call is refused with
// Retry-After, the call under way still gets its answer, and the process then exits.
func TestShutdownDrainsCallsUnderWay(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	gh := newHeldGitHub(t)
	srv := startServer(t, bin, map[string]string{
		"SWITCHBOARD_DATABASE_URL":    "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db"),
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_DRAIN_TIMEOUT":   "2m",
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
	req, _ := json.Marshal(callArgs)
	reqCtx, cancelReq := context.WithTimeout(t.Context(), testwait.Timeout)
	defer cancelReq()
	hreq, _ := http.NewRequestWithContext(reqCtx, http.MethodPost, srv.BaseURL+"/api/tools/github_get_issue/call", strings.NewReader(string(req)))
	hreq.Header.Set("Authorization", "Bearer "+srv.AdminKey)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatalf("a call while draining: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a call while draining: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
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
		t.Errorf("GitHub got %q, want the one call (the refused one never ran)", calls)
	}
}
