package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestAnsweredCallsKeepTheirAuditRows drives tool calls (reads and issue creations)
// into a real server, holds the upstream's answers once enough calls were answered,
// kills the server with SIGKILL while every caller's request waits at GitHub, starts
// another on the same database, and checks the audit log against what GitHub got:
// every call whose answer reached the client has its row (the row is committed before
// the answer leaves; each answer names its row, audit_id), and there are exactly as
// many rows of issue creations as creations GitHub received (the row of a call that
// may change something is on record before its request leaves; a read's is written on
// its answer, as a read cut by the kill changed nothing). The creations cut by the kill
// are outcome_unknown once a node knows their node is gone: at the restart on SQLite (one node), once the killed node is no longer live
// on PostgreSQL, in flight until then.
func TestAnsweredCallsKeepTheirAuditRows(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	eachDatabase(t, "switchboard.db", func(t *testing.T, dbURL string) { runAuditCrash(t, bin, dbURL) })
}

func runAuditCrash(t *testing.T, bin, dbURL string) {
	var upstreamCalls, upstreamWrites, heldCalls, heldWrites atomic.Int64
	hold := make(chan struct{}) // closed: requests wait for the kill unanswered
	stop := make(chan struct{}) // closed when the test ends: held requests let go
	issues := fmt.Sprintf("/repos/%s/%s/issues", githubOwner, githubRepo)
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-OAuth-Scopes", githubFakeScopes)
		if r.Method == http.MethodGet && r.URL.Path == "/user" {
			writeJSON(w, http.StatusOK, githubUser(githubLogin))
			return
		}
		upstreamCalls.Add(1)
		write := r.Method != http.MethodGet
		if write {
			upstreamWrites.Add(1)
		}
		_, _ = io.Copy(io.Discard, r.Body) // read whole, the request's context ends when the hub goes
		select {
		case <-hold:
			heldCalls.Add(1)
			if write {
				heldWrites.Add(1)
			}
			select {
			case <-r.Context().Done(): // the hub was killed
			case <-stop:
			}
			return
		default:
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == fmt.Sprintf("%s/%d", issues, githubIssueNum):
			writeJSON(w, http.StatusOK, githubIssue(githubIssueTitle, nil, githubLogin))
		case r.Method == http.MethodPost && r.URL.Path == issues:
			writeJSON(w, http.StatusCreated, githubIssue("Filed under load", nil, githubLogin))
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		}
	}))
	t.Cleanup(gh.Close)
	t.Cleanup(func() { close(stop) }) // before gh.Close, which waits for the handlers
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL":    dbURL,
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_LOG_LEVEL":       "error",
	}
	first := startServer(t, bin, env)
	api := &apiClient{Base: first.BaseURL, Key: first.AdminKey}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}

	// Callers in closed loops, each bounded, half reading and half creating issues; a
	// caller stops at its first failure (the kill).
	const callers, maxCalls = 8, 20000
	var mu sync.Mutex
	var answered []string
	enough := make(chan struct{})
	var wg sync.WaitGroup
	read, _ := json.Marshal(map[string]any{"arguments": map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum}})
	create, _ := json.Marshal(map[string]any{"arguments": map[string]any{"owner": githubOwner, "repo": githubRepo, "title": "Filed under load"}})
	for i := range callers {
		tool, args := "github_get_issue", read
		if i%2 == 1 {
			tool, args = "github_create_issue", create
		}
		wg.Go(func() {
			client := &http.Client{Timeout: 2 * time.Minute}
			for range maxCalls {
				req, _ := http.NewRequest(http.MethodPost, first.BaseURL+"/api/tools/"+tool+"/call", bytes.NewReader(args))
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
					t.Errorf("a call of %s answered %d %s, want 200 with its audit_id", tool, resp.StatusCode, body)
					return
				}
				mu.Lock()
				answered = append(answered, v.AuditID)
				n := len(answered)
				mu.Unlock()
				if n == 300 {
					close(enough)
				}
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
	}
	close(hold)
	// Every caller's next request waits at GitHub: none is between its row and GitHub.
	testwait.Until(t, "every caller's request to wait at GitHub", func() bool { return heldCalls.Load() == callers })
	first.Kill()
	testwait.Wait(t, "the callers to stop once the server was killed", wg.Wait)
	if len(answered) < 300 {
		t.Fatalf("only %d calls answered before the kill", len(answered))
	}

	second := startServer(t, bin, env)
	api = &apiClient{Base: second.BaseURL, Key: first.AdminKey}
	outcomes := map[string]string{}
	creations := 0 // rows of issue creations
	cursor := ""
	for {
		q := url.Values{"kind": {"tool_call"}, "tool": {"github_"}, "limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, body := api.Do(t, http.MethodGet, "/api/audit?"+q.Encode(), nil)
		var page struct {
			Events []struct {
				ID      string `json:"id"`
				Tool    string `json:"tool"`
				Outcome string `json:"outcome"`
			} `json:"events"`
			Next string `json:"next_cursor"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET /api/audit: %d %s", status, body)
		}
		for _, e := range page.Events {
			outcomes[e.ID] = e.Outcome
			if e.Tool == "github_create_issue" {
				creations++
			}
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	missing := 0
	for _, id := range answered {
		if outcomes[id] != "ok" {
			missing++
		}
	}
	unfinished := map[string]int{}
	for _, o := range outcomes {
		if o != "ok" {
			unfinished[o]++
		}
	}
	t.Logf("%d calls answered before the kill, %d rows after the restart (%v not ok), %d upstream requests (%d creations, %d of them held at the kill)",
		len(answered), len(outcomes), unfinished, upstreamCalls.Load(), upstreamWrites.Load(), heldWrites.Load())
	if missing > 0 {
		t.Errorf("%d of %d answered calls have no audit row ok after the crash", missing, len(answered))
	}
	if got, want := int64(creations), upstreamWrites.Load(); got != want {
		t.Errorf("%d audit rows of issue creations, GitHub got %d creations: want one row per creation", got, want)
	}
	if heldWrites.Load() == 0 {
		t.Fatalf("no creation was held at GitHub at the kill: the test proves nothing of rows in flight")
	}
	held := int(heldWrites.Load())
	want := map[string]int{"outcome_unknown": held}
	if strings.HasPrefix(dbURL, "postgres") {
		// The killed node still looks live for a while: its calls stay in flight until
		// a peer sees it gone.
		want = map[string]int{"in_flight": held}
		if unfinished["outcome_unknown"] > 0 {
			want = map[string]int{"outcome_unknown": held}
		}
	}
	if !maps.Equal(unfinished, want) {
		t.Errorf("the rows not ok: %v, want %v (the calls held at GitHub at the kill)", unfinished, want)
	}
}
