package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/runs"
)

// issuesGitHub answers GET /user and POST /repos/{owner}/{repo}/issues as GitHub's API
// does, and records the issues it was asked to open with the token that asked.
type issuesGitHub struct {
	*httptest.Server
	mu     sync.Mutex
	opened []string // "Bearer token: title"
}

func newIssuesGitHub(t *testing.T) *issuesGitHub {
	t.Helper()
	f := &issuesGitHub{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/user":
			w.Header().Set("X-OAuth-Scopes", "repo")
			_, _ = io.WriteString(w, `{"login":"octocat","id":583231,"type":"User"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/repos/octo-org/hello/issues":
			var in struct {
				Title string `json:"title"`
			}
			_ = json.NewDecoder(r.Body).Decode(&in)
			f.mu.Lock()
			f.opened = append(f.opened, r.Header.Get("Authorization")+": "+in.Title)
			n := len(f.opened)
			f.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"id": 9000 + n, "number": n, "state": "open", "title": in.Title,
				"html_url": fmt.Sprintf("https://github.com/octo-org/hello/issues/%d", n), "user": map[string]any{"login": "octocat", "id": 583231},
				"labels": []any{}, "assignees": []any{}, "comments": 0, "created_at": "2026-05-04T10:11:12Z", "updated_at": "2026-05-04T10:11:12Z"})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *issuesGitHub) issues() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.opened...)
}

// TestWorkflowRunApprovedOnItsPage: under approval "person", a workflow run that needs
// a confirmation links to its approval page; the person it belongs to, signed in,
// sees there what its steps will change and approves it, and the run goes on: the
// upstream then receives the step's request. A declined run ends canceled and sends
// nothing.
func TestWorkflowRunApprovedOnItsPage(t *testing.T) {
	t.Parallel()
	gh := newIssuesGitHub(t)
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error",
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL})
	lines, _ := startServe(t, e, 6)
	base, key, link := firstStart(t, lines)
	n := node{base: base}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const formToken = "ffffffffffffffffffffffffffffffff"
	send := func(method, path string, form url.Values, cookies ...*http.Cookie) (*http.Response, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.AddCookie(&http.Cookie{Name: "switchboard_form", Value: formToken})
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	const password = "a long enough password 42"
	if res, _ := send(http.MethodPost, strings.TrimPrefix(link, base), url.Values{"csrf": {formToken}, "password": {password}, "confirm": {password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("set the admin's password: status %d", res.StatusCode)
	}
	res, _ := send(http.MethodPost, "/signin", url.Values{"csrf": {formToken}, "tenant": {"default"}, "email": {"admin@localhost"}, "password": {password}})
	var session *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "switchboard_session" {
			session = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || session == nil {
		t.Fatalf("sign-in: status %d, cookies %v; want 303 with a session", res.StatusCode, res.Cookies())
	}

	if code := n.api(t, http.MethodPut, "/api/mcp-settings", key, `{"confirm":"always","approval":"person","tool_mode":"all"}`, nil); code != http.StatusOK {
		t.Fatalf("set approval person: status %d", code)
	}
	if code := n.api(t, http.MethodPost, "/api/connections", key, `{"provider":"github","token":"ghp_approvals"}`, nil); code != http.StatusCreated {
		t.Fatalf("connect GitHub: status %d", code)
	}
	def := `{"definition":"name: open_issue\nparameters: {type: object, properties: {title: {type: string}}, required: [title]}\nsteps:\n  - name: open\n    tool: github_create_issue\n    args: {owner: octo-org, repo: hello, title: \"${{ params.title }}\"}\n"}`
	if code := n.api(t, http.MethodPost, "/api/workflows", key, def, nil); code != http.StatusCreated {
		t.Fatalf("save the workflow: status %d", code)
	}

	csrfField := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	tests := []struct {
		name, title, action string
		state               runs.State
		before, opened      []string // the issues opened before the answer, and after the run
	}{
		{name: "approved", title: "Approved on the page", action: "accept", state: runs.StateCompleted, opened: []string{"Bearer ghp_approvals: Approved on the page"}},
		{name: "declined", title: "Declined on the page", action: "decline", state: runs.StateCanceled,
			before: []string{"Bearer ghp_approvals: Approved on the page"}, opened: []string{"Bearer ghp_approvals: Approved on the page"}},
	}
	for _, tt := range tests { // in order: the second checks the first's request is the only one
		var run runs.View
		if code := n.api(t, http.MethodPost, "/api/workflows/open_issue/runs", key, `{"parameters":{"title":"`+tt.title+`"}}`, &run); code != http.StatusAccepted {
			t.Fatalf("%s: start the run: status %d", tt.name, code)
		}
		if run.State != runs.StateInputRequired || run.ApprovalURL != base+"/approvals/"+run.ID {
			t.Fatalf("%s: run = %+v; want input_required linking its approval page", tt.name, run)
		}
		page := strings.TrimPrefix(run.ApprovalURL, base)
		res, body := send(http.MethodGet, page, nil, session)
		form := csrfField.FindStringSubmatch(body)
		if res.StatusCode != http.StatusOK || form == nil || !strings.Contains(html.UnescapeString(body), "It will change: open: Create issue (github_create_issue)") {
			t.Fatalf("%s: approval page: status %d, want 200 with what the step changes and the form\n%s", tt.name, res.StatusCode, body)
		}
		if got := gh.issues(); strings.Join(got, "|") != strings.Join(tt.before, "|") {
			t.Fatalf("%s: the upstream got %q before the answer", tt.name, gh.issues())
		}
		res, _ = send(http.MethodPost, page, url.Values{"csrf": {html.UnescapeString(form[1])}, "action": {tt.action}}, session)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != page {
			t.Fatalf("%s: answer: status %d to %q, want 303 back to the page", tt.name, res.StatusCode, res.Header.Get("Location"))
		}
		testwait.Until(t, tt.name+" run to end", func() bool {
			var v runs.View
			n.api(t, http.MethodGet, "/api/runs/"+run.ID, key, "", &v)
			run = v
			return v.State.Final()
		})
		if run.State != tt.state {
			t.Errorf("%s: run ended %s (%+v), want %s", tt.name, run.State, run.Error, tt.state)
		}
		if got := gh.issues(); strings.Join(got, "|") != strings.Join(tt.opened, "|") {
			t.Errorf("%s: the upstream opened %q, want %q", tt.name, got, tt.opened)
		}
	}
}
