package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunsSurviveACrash starts two runs on a real server whose GitHub answers are held,
// kills the process with SIGKILL, starts another on the same database and key, and
// checks that the read (idempotent) run is run again to its output while the issue
// creation (not idempotent) is marked failed with the reason and never sent twice.
func TestRunsSurviveACrash(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	eachDatabase(t, "switchboard.db", func(t *testing.T, dbURL string) { runCrashFlow(t, bin, dbURL) })
}

// heldGitHub answers GET /user, and holds GET and POST of issues until released.
type heldGitHub struct {
	*httptest.Server
	gate    chan struct{}
	arrived chan string
	mu      sync.Mutex
	got     []string
}

func newHeldGitHub(t *testing.T) *heldGitHub {
	t.Helper()
	g := &heldGitHub{gate: make(chan struct{}), arrived: make(chan string, 16)}
	issues := "/repos/" + githubOwner + "/" + githubRepo + "/issues"
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+githubToken {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
			return
		}
		w.Header().Set("X-OAuth-Scopes", githubFakeScopes)
		if r.Method == http.MethodGet && r.URL.Path == "/user" {
			writeJSON(w, http.StatusOK, githubUser(githubLogin))
			return
		}
		call := r.Method + " " + r.URL.Path
		g.mu.Lock()
		g.got = append(g.got, call)
		g.mu.Unlock()
		g.arrived <- call
		select {
		case <-g.gate:
		case <-r.Context().Done():
			return
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == fmt.Sprintf("%s/%d", issues, githubIssueNum):
			writeJSON(w, http.StatusOK, githubIssue(githubIssueTitle, nil, githubLogin))
		case r.Method == http.MethodPost && r.URL.Path == issues:
			writeJSON(w, http.StatusCreated, githubIssue("Filed before the crash", nil, githubLogin))
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		}
	}))
	t.Cleanup(func() {
		g.release()
		g.Close()
	})
	return g
}

func (g *heldGitHub) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.gate:
	default:
		close(g.gate)
	}
}

func (g *heldGitHub) calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.got...)
}

func runCrashFlow(t *testing.T, bin, dbURL string) {
	gh := newHeldGitHub(t)
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":    dbURL,
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_RUN_LEASE":       "2s",
	}
	first := startServer(t, bin, env)
	api := &apiClient{Base: first.BaseURL, Key: first.AdminKey}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	start := func(tool string, args map[string]any) string {
		t.Helper()
		status, body := api.Do(t, http.MethodPost, "/api/runs", map[string]any{"tool": tool, "arguments": args})
		var v struct {
			ID    string `json:"run_id"`
			State string `json:"state"`
		}
		if err := json.Unmarshal(body, &v); status != http.StatusAccepted || err != nil || v.State != "working" {
			t.Fatalf("POST /api/runs %s: %d %s", tool, status, body)
		}
		return v.ID
	}
	read := start("github_get_issue", map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum})
	create := start("github_create_issue", map[string]any{"owner": githubOwner, "repo": githubRepo, "title": "Filed before the crash"})
	for range 2 {
		select {
		case <-gh.arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("the runs did not reach GitHub; it got %q", gh.calls())
		}
	}

	first.Kill()
	second := startServer(t, bin, env)
	gh.release()
	api = &apiClient{Base: second.BaseURL, Key: first.AdminKey}

	type run struct {
		State  string         `json:"state"`
		Output map[string]any `json:"output"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	final := func(id string) run {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, body := api.Do(t, http.MethodGet, "/api/runs/"+id, nil)
			var r run
			if err := json.Unmarshal(body, &r); status != http.StatusOK || err != nil {
				t.Fatalf("GET /api/runs/%s after the restart: %d %s", id, status, body)
			}
			if r.State != "working" || time.Now().After(deadline) {
				return r
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if r := final(read); r.State != "completed" || r.Output["number"] != float64(githubIssueNum) || r.Output["title"] != githubIssueTitle {
		t.Errorf("the read run after the crash: %+v; want completed with issue %d", r, githubIssueNum)
	}
	if r := final(create); r.State != "failed" || r.Error == nil || r.Error.Code != "interrupted" || !strings.Contains(r.Error.Message, "not idempotent") {
		t.Errorf("the create run after the crash: %+v; want failed, interrupted, not run again", r)
	}
	issue := fmt.Sprintf("/repos/%s/%s/issues", githubOwner, githubRepo)
	want := map[string]int{"GET " + fmt.Sprintf("%s/%d", issue, githubIssueNum): 2, "POST " + issue: 1}
	got := map[string]int{}
	for _, c := range gh.calls() {
		got[c]++
	}
	for call, n := range want {
		if got[call] != n {
			t.Errorf("GitHub got %s %d times, want %d (all: %q)", call, got[call], n, gh.calls())
		}
	}
}
