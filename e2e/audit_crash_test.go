package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestAnsweredCallsKeepTheirAuditRows drives tool calls into a real server, kills it
// with SIGKILL mid-load, starts another on the same database, and checks that every
// call whose answer reached the client has its audit row: the row is committed before
// the answer leaves. Each answer names its row (audit_id), which is how the client
// matches them.
func TestAnsweredCallsKeepTheirAuditRows(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	eachDatabase(t, "switchboard.db", func(t *testing.T, dbURL string) { runAuditCrash(t, bin, dbURL) })
}

func runAuditCrash(t *testing.T, bin, dbURL string) {
	var upstreamCalls atomic.Int64
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-OAuth-Scopes", githubFakeScopes)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/user":
			writeJSON(w, http.StatusOK, githubUser(githubLogin))
		case r.Method == http.MethodGet && r.URL.Path == fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum):
			upstreamCalls.Add(1)
			writeJSON(w, http.StatusOK, githubIssue(githubIssueTitle, nil, githubLogin))
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		}
	}))
	t.Cleanup(gh.Close)
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":    dbURL,
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_LOG_LEVEL":       "error",
	}
	first := startServer(t, bin, env)
	api := &apiClient{base: first.BaseURL, key: first.AdminKey}
	if status, body := api.do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}

	// Callers in closed loops, each bounded; a caller stops at its first failure
	// (the kill).
	const callers, maxCalls = 8, 20000
	var mu sync.Mutex
	var answered []string
	enough := make(chan struct{})
	var wg sync.WaitGroup
	args, _ := json.Marshal(map[string]any{"arguments": map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum}})
	for range callers {
		wg.Go(func() {
			client := &http.Client{Timeout: 30 * time.Second}
			for range maxCalls {
				req, _ := http.NewRequest(http.MethodPost, first.BaseURL+"/api/tools/github_get_issue/call", bytes.NewReader(args))
				req.Header.Set("Authorization", "Bearer "+first.AdminKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					return // the answer did not arrive whole: it did not leave the hub
				}
				var v struct {
					AuditID string `json:"audit_id"`
				}
				if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &v) != nil || v.AuditID == "" {
					t.Errorf("a call answered %d %s, want 200 with its audit_id", resp.StatusCode, body)
					return
				}
				mu.Lock()
				answered = append(answered, v.AuditID)
				n := len(answered)
				mu.Unlock()
				if n == 300 {
					close(enough) // the kill follows this answer at once, before any timed flush
				}
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
	}
	first.kill() // mid-load: the callers are still calling
	testwait.Wait(t, "the callers to stop once the server was killed", wg.Wait)
	if len(answered) < 300 {
		t.Fatalf("only %d calls answered before the kill", len(answered))
	}

	second := startServer(t, bin, env)
	api = &apiClient{base: second.BaseURL, key: first.AdminKey}
	rows := map[string]bool{}
	cursor := ""
	for {
		q := url.Values{"kind": {"tool_call"}, "tool": {"github_get_issue"}, "limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, body := api.do(t, http.MethodGet, "/api/audit?"+q.Encode(), nil)
		var page struct {
			Events []struct {
				ID string `json:"id"`
			} `json:"events"`
			Next string `json:"next_cursor"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET /api/audit: %d %s", status, body)
		}
		for _, e := range page.Events {
			rows[e.ID] = true
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	missing := 0
	for _, id := range answered {
		if !rows[id] {
			missing++
		}
	}
	t.Logf("%d calls answered before the kill, %d rows after the restart, %d upstream calls", len(answered), len(rows), upstreamCalls.Load())
	if missing > 0 {
		t.Errorf("%d of %d answered calls have no audit row after the crash", missing, len(answered))
	}
}
