package e2e

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

// received is one request a fake upstream got, as the test checks it.
type received struct {
	Method        string
	Path          string
	Query         string
	ContentType   string
	Authorization string
	Accept        string
	APIVersion    string // X-GitHub-Api-Version
	Body          string
}

// recorder keeps the requests a fake received, safe for concurrent handlers.
type recorder struct {
	mu   sync.Mutex
	reqs []received
	// abandoned counts the requests whose caller went away before the answer.
	abandoned int
}

// githubHoldQuery is the repository search the fake GitHub answers only after 30 s,
// unless its caller gives up first.
const githubHoldQuery = "hold-until-canceled"

// abandonedCalls is how many requests the caller gave up on.
func (rec *recorder) abandonedCalls() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.abandoned
}

func (rec *recorder) record(r *http.Request) (received, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return received{}, fmt.Errorf("read body: %w", err)
	}
	got := received{
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

func (rec *recorder) all() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.reqs...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Fixture values the fakes answer with and the test expects back.
const (
	githubToken     = "ghp_e2eTokenAbcdefghijklmnopqrstuvwxyz0123"
	githubBadToken  = "ghp_e2eRevokedTokenZyxwvutsrqponmlkjihgf98"
	githubLogin     = "octocat"
	githubBetaToken = "ghp_e2eBetaTokenBcdefghijklmnopqrstuvwxy45" // tenant beta's own account
	// githubRenewedToken is a second token of octocat's, for reconnecting in place.
	githubRenewedToken = "ghp_e2eRenewedTokenCdefghijklmnopqrstuvw67"
	githubBetaLogin    = "hubot"
	githubOwner        = "octo-org"
	githubRepo         = "hello-world"
	githubIssueNum     = 1347
	githubIssueTitle   = "Crash when the config file is empty" // the issue GET and PATCH answer
	githubCreatedAt    = "2026-05-04T10:11:12Z"
	slackToken         = "xoxb-1111111111-2222222222222-e2eSlackTokenSecretValue"
	slackTeam          = "Acme"
	slackChannel       = "C0E2E0001"
	slackTS            = "1712345678.000100"
	githubFakeScopes   = "repo, read:org"
	slackFakeScopes    = "chat:write,channels:read,channels:history,reactions:write,users:read"
)

// githubAccounts are the logins of the tokens the fake GitHub accepts.
var githubAccounts = map[string]string{githubToken: githubLogin, githubBetaToken: githubBetaLogin, githubRenewedToken: githubLogin}

// fakeGitHub answers like api.github.com for GET /user and POST
// /repos/{owner}/{repo}/issues as the account of the token (githubAccounts): 401 "Bad
// credentials" for any other token, 422 with
// errors[] for a missing title, 404 for any other path, and the rate-limit and scope
// headers GitHub sets on every answer.
// https://docs.github.com/rest/users/users#get-the-authenticated-user
// https://docs.github.com/rest/issues/issues#create-an-issue
func fakeGitHub(t testing.TB) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := rec.record(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
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
		login, known := githubAccounts[token]
		if !known {
			writeJSON(w, http.StatusUnauthorized, map[string]string{
				"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
			return
		}
		h.Set("X-OAuth-Scopes", githubFakeScopes)
		h.Set("X-Accepted-OAuth-Scopes", "")
		issuesPath := "/repos/" + githubOwner + "/" + githubRepo + "/issues"
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/user":
			writeJSON(w, http.StatusOK, githubUser(login))
		case r.Method == http.MethodPost && r.URL.Path == issuesPath:
			var in struct {
				Title *string `json:"title"`
				Body  *string `json:"body"`
			}
			if err := json.Unmarshal([]byte(got.Body), &in); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{
					"message": "Problems parsing JSON", "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue", "status": "400"})
				return
			}
			if in.Title == nil || *in.Title == "" {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
					"message":           "Validation Failed",
					"errors":            []map[string]string{{"resource": "Issue", "code": "missing_field", "field": "title"}},
					"documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue",
					"status":            "422",
				})
				return
			}
			issue := githubIssue(*in.Title, in.Body, login)
			h.Set("Location", issue["url"].(string))
			writeJSON(w, http.StatusCreated, issue)
		case r.Method == http.MethodGet && r.URL.Path == fmt.Sprintf("%s/%d", issuesPath, githubIssueNum):
			// https://docs.github.com/rest/issues/issues#get-an-issue
			writeJSON(w, http.StatusOK, githubIssue(githubIssueTitle, nil, login))
		case r.Method == http.MethodPatch && r.URL.Path == fmt.Sprintf("%s/%d", issuesPath, githubIssueNum):
			// https://docs.github.com/rest/issues/issues#update-an-issue
			var in struct {
				State *string `json:"state"`
			}
			if err := json.Unmarshal([]byte(got.Body), &in); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{
					"message": "Problems parsing JSON", "documentation_url": "https://docs.github.com/rest/issues/issues#update-an-issue", "status": "400"})
				return
			}
			issue := githubIssue(githubIssueTitle, nil, login)
			if in.State != nil {
				issue["state"] = *in.State
			}
			writeJSON(w, http.StatusOK, issue)
		case r.Method == http.MethodGet && r.URL.Path == "/search/repositories" && r.URL.Query().Get("q") == githubHoldQuery:
			// A search that takes until its caller gives up (bounded): what Try it's
			// Cancel is tried on. The recorder counts the calls that were abandoned.
			select {
			case <-r.Context().Done():
				rec.mu.Lock()
				rec.abandoned++
				rec.mu.Unlock()
			case <-time.After(30 * time.Second):
				writeJSON(w, http.StatusOK, map[string]any{"total_count": 0, "incomplete_results": false, "items": []any{}})
			}
		case r.Method == http.MethodGet && r.URL.Path == "/search/repositories":
			// https://docs.github.com/rest/search/search#search-repositories
			if r.URL.Query().Get("q") == "" {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
					"message":           "Validation Failed",
					"errors":            []map[string]string{{"resource": "Search", "field": "q", "code": "missing"}},
					"documentation_url": "https://docs.github.com/rest/search/search#search-repositories",
					"status":            "422",
				})
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"total_count": 1, "incomplete_results": false, "items": []any{githubRepository(login)}})
		default:
			writeJSON(w, http.StatusNotFound, map[string]string{
				"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		}
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// githubRepository is the fake's one repository as search lists it (a
// repo-search-result-item, abridged to the fields a client reads).
func githubRepository(login string) map[string]any {
	full := githubOwner + "/" + githubRepo
	return map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": githubRepo, "full_name": full,
		"owner": githubUser(login), "private": false, "html_url": "https://github.com/" + full,
		"description": "A switchboard for the end-to-end tests", "fork": false,
		"url": "https://api.github.com/repos/" + full, "created_at": githubCreatedAt, "updated_at": githubCreatedAt,
		"pushed_at": githubCreatedAt, "stargazers_count": 80, "watchers_count": 80, "language": "Go", "forks_count": 9,
		"open_issues_count": 1, "default_branch": "main", "score": 1, "archived": false, "disabled": false,
		"topics": []string{"mcp"}, "visibility": "public",
	}
}

// githubUser is the user object GitHub answers for login.
func githubUser(login string) map[string]any {
	id := 1
	if login != githubLogin {
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

// githubIssue is the issue object GitHub answers a create with (trimmed of fields
// nobody reads, but with every field our provider reads, in GitHub's shape), opened by
// login.
func githubIssue(title string, body *string, login string) map[string]any {
	repoURL := "https://api.github.com/repos/" + githubOwner + "/" + githubRepo
	u := githubUser(login)
	return map[string]any{
		"id": 2001347, "node_id": "I_kwDOE2E", "number": githubIssueNum,
		"url":            fmt.Sprintf("%s/issues/%d", repoURL, githubIssueNum),
		"repository_url": repoURL,
		"html_url":       fmt.Sprintf("https://github.com/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum),
		"state":          "open", "state_reason": nil, "title": title, "body": body,
		"user": u, "labels": []any{}, "assignee": nil, "assignees": []any{}, "milestone": nil,
		"locked": false, "active_lock_reason": nil, "comments": 0,
		"closed_at": nil, "created_at": githubCreatedAt, "updated_at": githubCreatedAt,
		"closed_by": nil, "author_association": "OWNER",
		"reactions": map[string]any{"url": fmt.Sprintf("%s/issues/%d/reactions", repoURL, githubIssueNum), "total_count": 0},
	}
}

// fakeSlack answers like https://slack.com/api for auth.test and chat.postMessage: HTTP
// 200 with ok:false and Slack's error code for a wrong token (invalid_auth), a missing
// argument or an unknown channel, and X-OAuth-Scopes on authenticated answers. Its URL
// has the /api prefix of the real base URL.
// https://api.slack.com/methods/auth.test
// https://api.slack.com/methods/chat.postMessage
func fakeSlack(t *testing.T) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := rec.record(r)
		if err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		if got.Authorization != "Bearer "+slackToken {
			if got.Authorization == "" {
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		w.Header().Set("X-OAuth-Scopes", slackFakeScopes)
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
					writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
					return
				}
				for k, v := range form {
					params[k] = v
				}
			case "application/json":
				var m map[string]any
				if err := json.Unmarshal([]byte(got.Body), &m); err != nil {
					writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_json"})
					return
				}
				for k, v := range m {
					params.Set(k, fmt.Sprint(v))
				}
			}
		}
		switch strings.TrimPrefix(r.URL.Path, "/api/") {
		case "auth.test":
			writeJSON(w, http.StatusOK, map[string]any{
				"ok": true, "url": "https://acme.slack.com/", "team": slackTeam, "user": "switchboard-bot",
				"team_id": "T0E2E0001", "user_id": "U0E2E0001", "bot_id": "B0E2E0001", "is_enterprise_install": false,
			})
		case "chat.postMessage":
			if r.Method != http.MethodPost {
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_request_data"})
				return
			}
			channel, text := params.Get("channel"), params.Get("text")
			switch {
			case channel == "":
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			case text == "" && params.Get("blocks") == "" && params.Get("attachments") == "":
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
			case channel != slackChannel:
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			default:
				writeJSON(w, http.StatusOK, map[string]any{
					"ok": true, "channel": slackChannel, "ts": slackTS,
					"message": map[string]any{
						"type": "message", "subtype": "bot_message", "text": text, "ts": slackTS,
						"user": "U0E2E0001", "bot_id": "B0E2E0001", "team": "T0E2E0001",
						"app_id": "A0E2E0001", "blocks": []any{},
					},
				})
			}
		default:
			writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "error": "unknown_method", "req_method": strings.TrimPrefix(r.URL.Path, "/api/")})
		}
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}
