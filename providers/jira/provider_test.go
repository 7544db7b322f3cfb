package jira_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/jira"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := jira.Spec()
	if spec.BaseURL != "https://api.atlassian.com" || spec.TokenHelp == "" || spec.Verify == nil {
		t.Errorf("spec base URL %q, token help %q, verify set %v", spec.BaseURL, spec.TokenHelp, spec.Verify != nil)
	}
	if diff := cmp.Diff([]providers.AuthKind{providers.AuthOAuth2}, spec.AuthKinds); diff != "" {
		t.Errorf("auth kinds (-want +got):\n%s", diff)
	}
	wantOAuth := &providers.OAuth2{AuthURL: "https://auth.atlassian.com/authorize", TokenURL: "https://auth.atlassian.com/oauth/token",
		Scopes:     []string{"read:jira-work", "write:jira-work", "read:jira-user", "offline_access"},
		AuthParams: map[string]string{"audience": "api.atlassian.com", "prompt": "consent"}}
	if diff := cmp.Diff(wantOAuth, spec.OAuth); diff != "" {
		t.Errorf("oauth (-want +got):\n%s", diff)
	}
	var names []string
	for name := range tools(t) {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"jira_add_comment", "jira_create_issue", "jira_find_users", "jira_get_issue", "jira_list_projects",
		"jira_list_transitions", "jira_search_issues", "jira_transition_issue", "jira_update_issue"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestHints pins each tool's annotations.
func TestHints(t *testing.T) {
	t.Parallel()
	read := providers.Hints{ReadOnly: true, Idempotent: true}
	for name, want := range map[string]providers.Hints{
		"jira_search_issues": read, "jira_get_issue": read, "jira_list_transitions": read, "jira_list_projects": read,
		"jira_find_users":   read,
		"jira_create_issue": {}, "jira_add_comment": {}, "jira_transition_issue": {},
		"jira_update_issue": {Destructive: true, Idempotent: true},
	} {
		if got := tools(t)[name].Info.Hints; got != want {
			t.Errorf("%s hints = %+v, want %+v", name, got, want)
		}
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, jira.Spec())
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(jira.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("jira"))
}

// TestVerify checks the cloud id discovery: the first Jira site is taken, named in the
// label (with how many there were), and recorded in the account's meta; the user comes
// from that site's /myself.
func TestVerify(t *testing.T) {
	t.Parallel()
	const (
		acme   = `{"id": "1324a887-45db-1bf4-1e99-ef0ff456d421", "url": "https://acme.atlassian.net", "name": "acme", "scopes": ["read:jira-work", "write:jira-work", "read:jira-user", "offline_access"], "avatarUrl": "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/flag.png"}`
		wiki   = `{"id": "7b9c2d4e-1f3a-4b5c-8d6e-9f0a1b2c3d4e", "url": "https://acme-wiki.atlassian.net", "name": "acme-wiki", "scopes": ["read:confluence-content.all"], "avatarUrl": "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/rocket.png"}`
		beta   = `{"id": "2c4e6a8b-0d1f-4a3b-9c5d-7e9f1a3b5c7d", "url": "https://beta.atlassian.net", "name": "beta", "scopes": ["read:jira-work"], "avatarUrl": "https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/star.png"}`
		myself = `{"self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/user?accountId=5b10ac8d82e05b22cc7d4ef5", "accountId": "5b10ac8d82e05b22cc7d4ef5", "accountType": "atlassian", "emailAddress": "mia@acme.com", "displayName": "Mia Krystof", "active": true, "timeZone": "Australia/Sydney", "locale": "en_US"}`
	)
	meta := map[string]string{"cloud_id": cloudID, "site_url": siteURL}
	for _, tc := range []struct {
		name      string
		resources string
		status    int // of accessible-resources; 200 when 0
		want      providers.Account
		wantCode  switchboard.Code
		wantPaths []string
	}{
		{name: "one site", resources: `[` + acme + `]`,
			want: providers.Account{ID: cloudID + "/5b10ac8d82e05b22cc7d4ef5", Label: "acme (acme.atlassian.net) as Mia Krystof",
				Scopes: []string{"read:jira-work", "write:jira-work", "read:jira-user", "offline_access"}, Meta: meta},
			wantPaths: []string{"/oauth/token/accessible-resources", apiBase + "/myself"}},
		{name: "several sites: the first Jira one, and the label says so", resources: `[` + wiki + `,` + acme + `,` + beta + `]`,
			want: providers.Account{ID: cloudID + "/5b10ac8d82e05b22cc7d4ef5", Label: "acme (acme.atlassian.net) as Mia Krystof; first of 2 Jira sites",
				Scopes: []string{"read:jira-work", "write:jira-work", "read:jira-user", "offline_access"}, Meta: meta},
			wantPaths: []string{"/oauth/token/accessible-resources", apiBase + "/myself"}},
		{name: "no Jira site", resources: `[` + wiki + `]`, wantCode: switchboard.CodeForbidden,
			wantPaths: []string{"/oauth/token/accessible-resources"}},
		{name: "revoked token", status: http.StatusUnauthorized, resources: `{"code": 401, "message": "Unauthorized"}`, wantCode: switchboard.CodeReconnect,
			wantPaths: []string{"/oauth/token/accessible-resources"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/oauth/token/accessible-resources":
					status := tc.status
					if status == 0 {
						status = http.StatusOK
					}
					answer(status, nil, tc.resources)(w, r)
				case apiBase + "/myself":
					answer(http.StatusOK, nil, myself)(w, r)
				default:
					answer(http.StatusNotFound, nil, `{"errorMessages": ["not found"]}`)(w, r)
				}
			})
			spec := jira.Spec()
			call := providertest.NewCall(t, &spec, up.URL, testToken)
			got, err := spec.Verify(context.Background(), call)
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
			var paths []string
			for _, req := range up.Requests() {
				paths = append(paths, req.Path)
				if req.Method != http.MethodGet || req.Header.Get("Authorization") != "Bearer "+testToken {
					t.Errorf("request %s %s with Authorization %q", req.Method, req.Path, req.Header.Get("Authorization"))
				}
			}
			if diff := cmp.Diff(tc.wantPaths, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			if call.Meta != nil {
				t.Errorf("verify changed the caller's call meta to %v", call.Meta)
			}
		})
	}
}

// TestWithoutCloudID checks that a connection without a recorded site is told to
// reconnect, and that nothing is sent.
func TestWithoutCloudID(t *testing.T) {
	t.Parallel()
	for _, meta := range []map[string]string{nil, {"cloud_id": ""}, {"cloud_id": "../../admin"}} {
		up := providertest.NewUpstream(t, answer(http.StatusOK, nil, `{}`))
		call := newCall(t, up.URL)
		call.Meta = meta
		_, err := invoke(t, "jira_get_issue", call, `{"key": "PROJ-1"}`)
		if code := switchboard.CodeOf(err); code != switchboard.CodeReconnect || !strings.Contains(err.Error(), "reconnect Jira") {
			t.Errorf("meta %v: error = %v, want reconnect", meta, err)
		}
		if n := len(up.Requests()); n != 0 {
			t.Errorf("meta %v: upstream got %d requests, want none", meta, n)
		}
	}
}

// TestFailures maps Jira's failures, answered in Atlassian's envelopes, to typed errors.
func TestFailures(t *testing.T) {
	t.Parallel()
	const (
		getIssue    = `{"key": "PROJ-123"}`
		createIssue = `{"project": "PROJ", "summary": "Add dark mode", "issue_type": "Task"}`
		search      = `{"jql": "project = PROJ AND sttus = Done"}`
	)
	for _, tc := range []struct {
		name, tool, args string
		status           int
		header           http.Header
		body             string
		wantCode         switchboard.Code
		wantField        string
		wantIn           string
		wantRetry        time.Duration
		wantAttempts     int
	}{
		{name: "401 from the gateway", tool: "jira_get_issue", args: getIssue, status: 401, body: `{"code": 401, "message": "Unauthorized"}`,
			wantCode: switchboard.CodeReconnect, wantIn: "Unauthorized; Atlassian no longer accepts", wantAttempts: 1},
		{name: "403 no permission", tool: "jira_create_issue", args: createIssue, status: 403,
			body:     `{"errorMessages": ["You do not have permission to create issues in this project."], "errors": {}}`,
			wantCode: switchboard.CodeForbidden, wantIn: "You do not have permission", wantAttempts: 1},
		{name: "404 issue", tool: "jira_get_issue", args: getIssue, status: 404,
			body:     `{"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}}`,
			wantCode: switchboard.CodeNotFound, wantIn: "Issue does not exist", wantAttempts: 1},
		{name: "400 field errors name our argument", tool: "jira_create_issue", args: createIssue, status: 400,
			body:     `{"errorMessages": [], "errors": {"issuetype": "Specify a valid issue type", "summary": "You must specify a summary of the issue."}}`,
			wantCode: switchboard.CodeInvalid, wantField: "issue_type", wantIn: "issuetype: Specify a valid issue type; summary: You must specify", wantAttempts: 1},
		{name: "400 bad JQL names jql", tool: "jira_search_issues", args: search, status: 400,
			body:     `{"errorMessages": ["Field 'sttus' does not exist or you do not have permission to view it."], "warningMessages": []}`,
			wantCode: switchboard.CodeInvalid, wantField: "jql", wantIn: "Field 'sttus' does not exist", wantAttempts: 1},
		{name: "429 with Retry-After", tool: "jira_get_issue", args: getIssue, status: 429, header: http.Header{"Retry-After": {"30"}},
			body:     `{"errorMessages": ["Rate limit exceeded."]}`,
			wantCode: switchboard.CodeRateLimited, wantIn: "retry after", wantRetry: 30 * time.Second, wantAttempts: 1},
		{name: "500 on a read is retried", tool: "jira_get_issue", args: getIssue, status: 500,
			body:     `{"errorMessages": ["Internal server error"], "errors": {}}`,
			wantCode: switchboard.CodeUpstream, wantIn: "try again shortly", wantAttempts: 3},
		{name: "503 on a create is sent once", tool: "jira_create_issue", args: createIssue, status: 503, header: http.Header{"Content-Type": {"text/html"}},
			body: "<html>Service Unavailable</html>", wantCode: switchboard.CodeUpstream, wantIn: "Service Unavailable", wantAttempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(tc.status, tc.header, tc.body))
			_, err := invoke(t, tc.tool, newCall(t, up.URL), tc.args)
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v (%T), want an UpstreamError", err, err)
			}
			if code := switchboard.CodeOf(err); code != tc.wantCode || ue.Status != tc.status {
				t.Errorf("error = code %q status %d, want %q %d", code, ue.Status, tc.wantCode, tc.status)
			}
			var se *switchboard.Error
			if tc.wantField != "" && (!errors.As(err, &se) || se.Field != tc.wantField) {
				t.Errorf("error %v does not name field %s", err, tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not contain %q", err, tc.wantIn)
			}
			if ue.RetryAfter != tc.wantRetry {
				t.Errorf("retry after = %v, want %v", ue.RetryAfter, tc.wantRetry)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q holds the token", err)
			}
			if n := len(up.Requests()); n != tc.wantAttempts {
				t.Errorf("upstream got %d requests, want %d", n, tc.wantAttempts)
			}
		})
	}
}

// TestBadInput checks that bad arguments fail as invalid on the field at fault before
// anything is sent.
func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, args, wantField string
	}{
		{name: "key with a path", tool: "jira_get_issue", args: `{"key": "../../myself"}`, wantField: "key"},
		{name: "key without a number", tool: "jira_add_comment", args: `{"key": "PROJ", "body": "x"}`, wantField: "key"},
		{name: "blank JQL", tool: "jira_search_issues", args: `{"jql": "  "}`, wantField: "jql"},
		{name: "limit over the maximum", tool: "jira_search_issues", args: `{"jql": "project = PROJ", "limit": 101}`, wantField: "limit"},
		{name: "foreign cursor", tool: "jira_list_projects", args: `{"cursor": "2"}`, wantField: "cursor"},
		{name: "cursor that is not a position", tool: "jira_list_projects", args: `{"cursor": "` + providers.EncodeCursor("abc") + `"}`, wantField: "cursor"},
		{name: "project that is not a key", tool: "jira_create_issue", args: `{"project": "PROJ/1", "summary": "x", "issue_type": "Task"}`, wantField: "project"},
		{name: "blank summary", tool: "jira_create_issue", args: `{"project": "PROJ", "summary": " ", "issue_type": "Task"}`, wantField: "summary"},
		{name: "label with a space", tool: "jira_create_issue", args: `{"project": "PROJ", "summary": "x", "issue_type": "Task", "labels": ["two words"]}`, wantField: "labels"},
		{name: "bad parent", tool: "jira_create_issue", args: `{"project": "PROJ", "summary": "x", "issue_type": "Task", "parent": "epic"}`, wantField: "parent"},
		{name: "bad due date", tool: "jira_update_issue", args: `{"key": "PROJ-1", "due_date": "tomorrow"}`, wantField: "due_date"},
		{name: "unassign and assign", tool: "jira_update_issue", args: `{"key": "PROJ-1", "unassign": true, "assignee_account_id": "5b10ac8d82e05b22cc7d4ef5"}`, wantField: "unassign"},
		{name: "update with nothing to change", tool: "jira_update_issue", args: `{"key": "PROJ-1"}`, wantField: "arguments"},
		{name: "blank comment", tool: "jira_add_comment", args: `{"key": "PROJ-1", "body": "\n"}`, wantField: "body"},
		{name: "blank user query", tool: "jira_find_users", args: `{"query": " "}`, wantField: "query"},
		{name: "assignable in a bad project", tool: "jira_find_users", args: `{"query": "mia", "project": "PROJ-1"}`, wantField: "project"},
		{name: "transition that is not an ID", tool: "jira_transition_issue", args: `{"key": "PROJ-1", "transition_id": "Done"}`, wantField: "transition_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(http.StatusOK, nil, `{}`))
			_, err := invoke(t, tc.tool, newCall(t, up.URL), tc.args)
			var se *switchboard.Error
			if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != tc.wantField {
				t.Fatalf("error = %v, want invalid on field %s", err, tc.wantField)
			}
			if n := len(up.Requests()); n != 0 {
				t.Errorf("upstream got %d requests, want none", n)
			}
		})
	}
}
