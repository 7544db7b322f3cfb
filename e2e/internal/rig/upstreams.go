package rig

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Received is one request a fake upstream got, as the test checks it.
type Received struct {
	Method        string
	Path          string
	Query         string
	ContentType   string
	Authorization string
	Accept        string
	APIVersion    string // X-GitHub-Api-Version
	Body          string
}

// Recorder keeps the requests a fake Received, safe for concurrent handlers.
type Recorder struct {
	mu   sync.Mutex
	reqs []Received
	// abandoned counts the requests whose caller went away before the answer.
	abandoned int
}

// GitHubHoldQuery is the repository search the fake GitHub answers only after 30 s,
// unless its caller gives up first.
const GitHubHoldQuery = "hold-until-canceled"

// AbandonedCalls is how many requests the caller gave up on.
func (rec *Recorder) AbandonedCalls() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.abandoned
}

// record keeps r as the fake received it.
func (rec *Recorder) record(r *http.Request) (Received, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return Received{}, fmt.Errorf("read body: %w", err)
	}
	got := Received{
		Method:        r.Method,
		Path:          r.URL.Path,
		Query:         r.URL.RawQuery,
		ContentType:   r.Header.Get("Content-Type"),
		Authorization: r.Header.Get("Authorization"),
		Accept:        r.Header.Get("Accept"),
		APIVersion:    r.Header.Get("X-GitHub-Api-Version"),
		Body:          string(body),
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, got)
	rec.mu.Unlock()
	return got, nil
}

// All returns the requests received so far, in order.
func (rec *Recorder) All() []Received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Received(nil), rec.reqs...)
}

// WriteJSON answers status with v as JSON, as the real APIs do.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Fixture values the fakes answer with and the test expects back.
const (
	GitHubToken     = "ghp_e2eTokenAbcdefghijklmnopqrstuvwxyz0123"
	GitHubBadToken  = "ghp_e2eRevokedTokenZyxwvutsrqponmlkjihgf98"
	GitHubLogin     = "octocat"
	GitHubBetaToken = "ghp_e2eBetaTokenBcdefghijklmnopqrstuvwxy45" // tenant beta's own account
	// GitHubRenewedToken is a second token of octocat's, for reconnecting in place.
	GitHubRenewedToken = "ghp_e2eRenewedTokenCdefghijklmnopqrstuvw67"
	GitHubBetaLogin    = "hubot"
	GitHubOwner        = "octo-org"
	GitHubRepo         = "hello-world"
	GitHubIssueNum     = 1347
	GitHubIssueTitle   = "Crash when the config file is empty" // the issue GET and PATCH answer
	GitHubCreatedAt    = "2026-05-04T10:11:12Z"
	SlackToken         = "xoxb-1111111111-2222222222222-e2eSlackTokenSecretValue"
	SlackTeam          = "Acme"
	SlackChannel       = "C0E2E0001"
	SlackTS            = "1712345678.000100"
	GitHubFakeScopes   = "repo, read:org"
	SlackFakeScopes    = "chat:write,channels:read,channels:history,reactions:write,users:read"
)

// GitHubAccounts are the logins of the tokens the fake GitHub accepts.
var GitHubAccounts = map[string]string{GitHubToken: GitHubLogin, GitHubBetaToken: GitHubBetaLogin, GitHubRenewedToken: GitHubLogin}

// FakeGitHub answers like api.github.com for GET /user and POST
// /repos/{owner}/{repo}/issues as the account of the token (GitHubAccounts): 401 "Bad
// credentials" for any other token, 422 with
// errors[] for a missing title, 404 for any other path, and the rate-limit and scope
// headers GitHub sets on every answer.
// https://docs.github.com/rest/users/users#get-the-authenticated-user
// https://docs.github.com/rest/issues/issues#create-an-issue
func FakeGitHub(t testing.TB) (*httptest.Server, *Recorder) {
	t.Helper()
	rec := &Recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := rec.record(r)
		if err != nil {
			WriteJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
			return
		}
		h := w.Header()
		h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
		h.Set("X-GitHub-Media-Type", "github.v3; format=json")
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "4987")
		h.Set("X-RateLimit-Used", "13")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
		token, ok := strings.CutPrefix(got.Authorization, "Bearer ")
		if !ok {
			token, _ = strings.CutPrefix(got.Authorization, "token ")
		}
		login, known := GitHubAccounts[token]
		if !known {
			WriteJSON(w, http.StatusUnauthorized, map[string]string{
				"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
			return
		}
		h.Set("X-OAuth-Scopes", GitHubFakeScopes)
		h.Set("X-Accepted-OAuth-Scopes", "")
		issuesPath := "/repos/" + GitHubOwner + "/" + GitHubRepo + "/issues"
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/user":
			WriteJSON(w, http.StatusOK, GitHubUser(login))
		case r.Method == http.MethodPost && r.URL.Path == issuesPath:
			var in struct {
				Title *string `json:"title"`
				Body  *string `json:"body"`
			}
			if err := json.Unmarshal([]byte(got.Body), &in); err != nil {
				WriteJSON(w, http.StatusBadRequest, map[string]string{
					"message": "Problems parsing JSON", "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue", "status": "400"})
				return
			}
			if in.Title == nil || *in.Title == "" {
				WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{
					"message":           "Validation Failed",
					"errors":            []map[string]string{{"resource": "Issue", "code": "missing_field", "field": "title"}},
					"documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue",
					"status":            "422",
				})
				return
			}
			issue := GitHubIssue(*in.Title, in.Body, login)
			h.Set("Location", issue["url"].(string))
			WriteJSON(w, http.StatusCreated, issue)
		case r.Method == http.MethodGet && r.URL.Path == fmt.Sprintf("%s/%d", issuesPath, GitHubIssueNum):
			// https://docs.github.com/rest/issues/issues#get-an-issue
			WriteJSON(w, http.StatusOK, GitHubIssue(GitHubIssueTitle, nil, login))
		case r.Method == http.MethodPatch && r.URL.Path == fmt.Sprintf("%s/%d", issuesPath, GitHubIssueNum):
			// https://docs.github.com/rest/issues/issues#update-an-issue
			var in struct {
				State *string `json:"state"`
			}
			if err := json.Unmarshal([]byte(got.Body), &in); err != nil {
				WriteJSON(w, http.StatusBadRequest, map[string]string{
					"message": "Problems parsing JSON", "documentation_url": "https://docs.github.com/rest/issues/issues#update-an-issue", "status": "400"})
				return
			}
			issue := GitHubIssue(GitHubIssueTitle, nil, login)
			if in.State != nil {
				issue["state"] = *in.State
			}
			WriteJSON(w, http.StatusOK, issue)
		case r.Method == http.MethodGet && r.URL.Path == "/search/repositories" && r.URL.Query().Get("q") == GitHubHoldQuery:
			// A search that takes until its caller gives up (bounded): what Try it's
			// Cancel is tried on. The Recorder counts the calls that were abandoned.
			select {
			case <-r.Context().Done():
				rec.mu.Lock()
				rec.abandoned++
				rec.mu.Unlock()
			case <-time.After(30 * time.Second):
				WriteJSON(w, http.StatusOK, map[string]any{"total_count": 0, "incomplete_results": false, "items": []any{}})
			}
		case r.Method == http.MethodGet && r.URL.Path == "/search/repositories":
			// https://docs.github.com/rest/search/search#search-repositories
			if r.URL.Query().Get("q") == "" {
				WriteJSON(w, http.StatusUnprocessableEntity, map[string]any{
					"message":           "Validation Failed",
					"errors":            []map[string]string{{"resource": "Search", "field": "q", "code": "missing"}},
					"documentation_url": "https://docs.github.com/rest/search/search#search-repositories",
					"status":            "422",
				})
				return
			}
			WriteJSON(w, http.StatusOK, map[string]any{"total_count": 1, "incomplete_results": false, "items": []any{GitHubRepository(login)}})
		default:
			WriteJSON(w, http.StatusNotFound, map[string]string{
				"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		}
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// GitHubRepository is the fake's one repository as search lists it (a
// repo-search-result-item, abridged to the fields a client reads).
func GitHubRepository(login string) map[string]any {
	full := GitHubOwner + "/" + GitHubRepo
	return map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": GitHubRepo, "full_name": full,
		"owner": GitHubUser(login), "private": false, "html_url": "https://github.com/" + full,
		"description": "A switchboard for the end-to-end tests", "fork": false,
		"url": "https://api.github.com/repos/" + full, "created_at": GitHubCreatedAt, "updated_at": GitHubCreatedAt,
		"pushed_at": GitHubCreatedAt, "stargazers_count": 80, "watchers_count": 80, "language": "Go", "forks_count": 9,
		"open_issues_count": 1, "default_branch": "main", "score": 1, "archived": false, "disabled": false,
		"topics": []string{"mcp"}, "visibility": "public",
	}
}

// GitHubUser is the user object GitHub answers for login.
func GitHubUser(login string) map[string]any {
	id := 1
	if login != GitHubLogin {
		id = 2
	}
	return map[string]any{
		"login": login, "id": id, "node_id": "MDQ6VXNlcjE=", "type": "User", "site_admin": false,
		"avatar_url": "https://github.com/images/error/octocat_happy.gif",
		"url":        "https://api.github.com/users/" + login, "html_url": "https://github.com/" + login,
		"name": "monalisa " + login, "company": "GitHub", "email": login + "@github.com",
		"public_repos": 2, "followers": 20, "following": 0,
		"created_at": "2008-01-14T04:33:35Z", "updated_at": "2008-01-14T04:33:35Z",
	}
}

// GitHubIssue is the issue object GitHub answers a create with (trimmed of fields
// nobody reads, but with every field our provider reads, in GitHub's shape), opened by
// login.
func GitHubIssue(title string, body *string, login string) map[string]any {
	repoURL := "https://api.github.com/repos/" + GitHubOwner + "/" + GitHubRepo
	u := GitHubUser(login)
	return map[string]any{
		"id": 2001347, "node_id": "I_kwDOE2E", "number": GitHubIssueNum,
		"url":            fmt.Sprintf("%s/issues/%d", repoURL, GitHubIssueNum),
		"repository_url": repoURL,
		"html_url":       fmt.Sprintf("https://github.com/%s/%s/issues/%d", GitHubOwner, GitHubRepo, GitHubIssueNum),
		"state":          "open", "state_reason": nil, "title": title, "body": body,
		"user": u, "labels": []any{}, "assignee": nil, "assignees": []any{}, "milestone": nil,
		"locked": false, "active_lock_reason": nil, "comments": 0,
		"closed_at": nil, "created_at": GitHubCreatedAt, "updated_at": GitHubCreatedAt,
		"closed_by": nil, "author_association": "OWNER",
		"reactions": map[string]any{"url": fmt.Sprintf("%s/issues/%d/reactions", repoURL, GitHubIssueNum), "total_count": 0},
	}
}

// FakeSlack answers like https://slack.com/api for auth.test and chat.postMessage: HTTP
// 200 with ok:false and Slack's error code for a wrong token (invalid_auth), a missing
// argument or an unknown channel, and X-OAuth-Scopes on authenticated answers. Its URL
// has the /api prefix of the real base URL.
// https://api.slack.com/methods/auth.test
// https://api.slack.com/methods/chat.postMessage
func FakeSlack(t *testing.T) (*httptest.Server, *Recorder) {
	t.Helper()
	rec := &Recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := rec.record(r)
		if err != nil {
			WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		if got.Authorization != "Bearer "+SlackToken {
			if got.Authorization == "" {
				WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
				return
			}
			WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		w.Header().Set("X-OAuth-Scopes", SlackFakeScopes)
		params := url.Values{}
		if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
			params = q
		}
		if r.Method == http.MethodPost {
			ct, _, _ := mime.ParseMediaType(got.ContentType)
			switch ct {
			case "application/x-www-form-urlencoded":
				form, err := url.ParseQuery(got.Body)
				if err != nil {
					WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
					return
				}
				for k, v := range form {
					params[k] = v
				}
			case "application/json":
				var m map[string]any
				if err := json.Unmarshal([]byte(got.Body), &m); err != nil {
					WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_json"})
					return
				}
				for k, v := range m {
					params.Set(k, fmt.Sprint(v))
				}
			}
		}
		switch strings.TrimPrefix(r.URL.Path, "/api/") {
		case "auth.test":
			WriteJSON(w, http.StatusOK, map[string]any{
				"ok": true, "url": "https://acme.slack.com/", "team": SlackTeam, "user": "switchboard-bot",
				"team_id": "T0E2E0001", "user_id": "U0E2E0001", "bot_id": "B0E2E0001", "is_enterprise_install": false,
			})
		case "chat.postMessage":
			if r.Method != http.MethodPost {
				WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_request_data"})
				return
			}
			channel, text := params.Get("channel"), params.Get("text")
			switch {
			case channel == "":
				WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			case text == "" && params.Get("blocks") == "" && params.Get("attachments") == "":
				WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
			case channel != SlackChannel:
				WriteJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			default:
				WriteJSON(w, http.StatusOK, map[string]any{
					"ok": true, "channel": SlackChannel, "ts": SlackTS,
					"message": map[string]any{
						"type": "message", "subtype": "bot_message", "text": text, "ts": SlackTS,
						"user": "U0E2E0001", "bot_id": "B0E2E0001", "team": "T0E2E0001",
						"app_id": "A0E2E0001", "blocks": []any{},
					},
				})
			}
		default:
			WriteJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "unknown_method", "req_method": strings.TrimPrefix(r.URL.Path, "/api/")})
		}
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}
