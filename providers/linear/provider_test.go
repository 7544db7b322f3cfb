package linear_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/linear"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := linear.Spec()
	if spec.BaseURL != "https://api.linear.app/graphql" || spec.TokenHelp == "" || spec.Verify == nil || spec.AuthHeader == nil {
		t.Errorf("spec base URL %q, token help %q, verify set %v, auth header set %v", spec.BaseURL, spec.TokenHelp, spec.Verify != nil, spec.AuthHeader != nil)
	}
	wantOAuth := &providers.OAuth2{AuthURL: "https://linear.app/oauth/authorize", TokenURL: "https://api.linear.app/oauth/token",
		Scopes: []string{"read", "write"}, ScopeSeparator: ",", PKCE: true}
	if diff := cmp.Diff(wantOAuth, spec.OAuth); diff != "" {
		t.Errorf("oauth (-want +got):\n%s", diff)
	}
	var names []string
	for name := range tools(t) {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"linear_add_comment", "linear_create_issue", "linear_get_issue", "linear_list_issues", "linear_list_projects",
		"linear_list_teams", "linear_search_issues", "linear_update_issue"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestHints pins each tool's annotations.
func TestHints(t *testing.T) {
	t.Parallel()
	read := providers.Hints{ReadOnly: true, Idempotent: true}
	for name, want := range map[string]providers.Hints{
		"linear_list_issues": read, "linear_search_issues": read, "linear_get_issue": read, "linear_list_teams": read,
		"linear_list_projects": read, "linear_create_issue": {}, "linear_add_comment": {},
		"linear_update_issue": {Destructive: true, Idempotent: true},
	} {
		if got := tools(t)[name].Info.Hints; got != want {
			t.Errorf("%s hints = %+v, want %+v", name, got, want)
		}
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, linear.Spec())
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(linear.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("linear"))
}

// TestVerify checks the viewer query, and that a personal API key goes bare in
// Authorization while an OAuth token goes as Bearer.
func TestVerify(t *testing.T) {
	t.Parallel()
	const viewer = `{"data": {"viewer": {"id": "5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a", "name": "Ada Lovelace", "email": "ada@acme.com"},
		"organization": {"id": "1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6", "name": "Acme"}}}`
	for _, tc := range []struct {
		name     string
		token    string
		rep      reply
		wantAuth string
		want     providers.Account
		wantCode switchboard.Code
	}{
		{name: "personal API key", token: testKey, rep: reply{body: viewer}, wantAuth: testKey,
			want: providers.Account{ID: "1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6/5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a", Label: "Acme (ada@acme.com)"}},
		{name: "OAuth token", token: testOAuth, rep: reply{body: viewer}, wantAuth: "Bearer " + testOAuth,
			want: providers.Account{ID: "1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6/5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a", Label: "Acme (ada@acme.com)"}},
		{name: "revoked key", token: testKey, wantAuth: testKey, wantCode: switchboard.CodeReconnect, rep: reply{status: http.StatusBadRequest,
			body: `{"errors": [{"message": "Authentication required, not authenticated", "extensions": {"type": "authentication error", "code": "AUTHENTICATION_ERROR", "statusCode": 401, "userPresentableMessage": "You need to authenticate to access this operation."}}]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := fakeLinear(t, map[string]reply{"Viewer": tc.rep})
			spec := linear.Spec()
			got, err := spec.Verify(context.Background(), newCall(t, up, tc.token))
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
			checkSent(t, up, call{Operation: "Viewer"})
			if got := up.Last(t).Header.Get("Authorization"); got != tc.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tc.wantAuth)
			}
		})
	}
}

// TestFailures maps Linear's failures, answered the way Linear answers them (GraphQL
// errors with HTTP 400 or 200, plain HTTP failures from its edge), to typed errors.
func TestFailures(t *testing.T) {
	t.Parallel()
	const (
		getIssue    = `{"issue": "ENG-123"}`
		createIssue = `{"team": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "title": "Add dark mode"}`
	)
	reset := time.Now().Add(90 * time.Second).UnixMilli()
	gqlErr := func(msg, code string, status int, user string) string {
		return `{"errors": [{"message": "` + msg + `", "extensions": {"type": "` + strings.ToLower(code) + `", "code": "` + code +
			`", "statusCode": ` + strconv.Itoa(status) + `, "userPresentableMessage": "` + user + `"}}]}`
	}
	for _, tc := range []struct {
		name, tool, args, op string
		rep                  reply
		wantCode             switchboard.Code
		wantReason           string
		wantIn               string
		wantRetryMin         time.Duration
		wantAttempts         int
	}{
		{name: "authentication error", tool: "linear_get_issue", args: getIssue, op: "GetIssue",
			rep:      reply{status: 400, body: gqlErr("Authentication required, not authenticated", "AUTHENTICATION_ERROR", 401, "You need to authenticate to access this operation.")},
			wantCode: switchboard.CodeReconnect, wantReason: "AUTHENTICATION_ERROR", wantIn: "reconnect Linear", wantAttempts: 1},
		{name: "plain 401 from the edge", tool: "linear_get_issue", args: getIssue, op: "GetIssue",
			rep:      reply{status: 401, header: http.Header{"Content-Type": {"text/plain"}}, body: "Unauthorized"},
			wantCode: switchboard.CodeReconnect, wantIn: "reconnect Linear", wantAttempts: 1},
		{name: "forbidden", tool: "linear_create_issue", args: createIssue, op: "CreateIssue",
			rep:      reply{status: 400, body: gqlErr("Forbidden", "FORBIDDEN", 403, "You do not have access to this team.")},
			wantCode: switchboard.CodeForbidden, wantReason: "FORBIDDEN", wantIn: "You do not have access to this team.", wantAttempts: 1},
		{name: "rate limited with the reset header", tool: "linear_get_issue", args: getIssue, op: "GetIssue",
			rep: reply{status: 400, header: http.Header{"X-Ratelimit-Requests-Limit": {"5000"}, "X-Ratelimit-Requests-Remaining": {"0"},
				"X-Ratelimit-Requests-Reset": {strconv.FormatInt(reset, 10)}},
				body: gqlErr("Rate limit exceeded", "RATELIMITED", 429, "Too many requests.")},
			wantCode: switchboard.CodeRateLimited, wantReason: "RATELIMITED", wantIn: "retry after", wantRetryMin: 80 * time.Second, wantAttempts: 1},
		{name: "entity not found answered with 200", tool: "linear_get_issue", args: getIssue, op: "GetIssue",
			rep: reply{body: `{"data": null, "errors": [{"message": "Entity not found: Issue", "path": ["issue"], "extensions": {"type": "invalid input",
				"code": "INVALID_INPUT", "statusCode": 400, "userPresentableMessage": "Could not find referenced Issue."}}]}`},
			wantCode: switchboard.CodeNotFound, wantReason: "INVALID_INPUT", wantIn: "Could not find referenced Issue.", wantAttempts: 1},
		{name: "invalid input", tool: "linear_create_issue", args: createIssue, op: "CreateIssue",
			rep:      reply{status: 400, body: gqlErr("Argument Validation Error", "INVALID_INPUT", 400, "title must be shorter than or equal to 255 characters")},
			wantCode: switchboard.CodeInvalid, wantReason: "INVALID_INPUT", wantIn: "shorter than", wantAttempts: 1},
		{name: "500 on a read is retried", tool: "linear_get_issue", args: getIssue, op: "GetIssue",
			rep:      reply{status: 500, body: gqlErr("Internal server error", "INTERNAL_SERVER_ERROR", 500, "")},
			wantCode: switchboard.CodeUpstream, wantReason: "INTERNAL_SERVER_ERROR", wantIn: "try again shortly", wantAttempts: 3},
		{name: "503 on a create is sent once", tool: "linear_create_issue", args: createIssue, op: "CreateIssue",
			rep:      reply{status: 503, header: http.Header{"Content-Type": {"text/html"}}, body: "<html>Service Unavailable</html>"},
			wantCode: switchboard.CodeUpstream, wantIn: "try again shortly", wantAttempts: 1},
		{name: "429 from the edge with Retry-After", tool: "linear_get_issue", args: getIssue, op: "GetIssue",
			rep:      reply{status: 429, header: http.Header{"Retry-After": {"40"}}, body: ""},
			wantCode: switchboard.CodeRateLimited, wantRetryMin: 40 * time.Second, wantAttempts: 1},
		{name: "mutation that did not succeed", tool: "linear_create_issue", args: createIssue, op: "CreateIssue",
			rep:      reply{body: `{"data": {"issueCreate": {"success": false, "issue": null}}}`},
			wantCode: switchboard.CodeUpstream, wantIn: "did not create", wantAttempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := fakeLinear(t, map[string]reply{tc.op: tc.rep})
			_, err := invoke(t, tc.tool, newCall(t, up, testKey), tc.args)
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v (%T), want an UpstreamError", err, err)
			}
			if ue.Code != tc.wantCode || ue.Reason != tc.wantReason {
				t.Errorf("error = code %q reason %q, want %q %q (%v)", ue.Code, ue.Reason, tc.wantCode, tc.wantReason, err)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not contain %q", err, tc.wantIn)
			}
			if ue.RetryAfter < tc.wantRetryMin || (tc.wantRetryMin == 0 && ue.RetryAfter != 0) || ue.RetryAfter > tc.wantRetryMin+10*time.Second {
				t.Errorf("retry after = %v, want about %v", ue.RetryAfter, tc.wantRetryMin)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q holds the key", err)
			}
			if n := len(up.Requests()); n != tc.wantAttempts {
				t.Errorf("upstream got %d requests, want %d", n, tc.wantAttempts)
			}
		})
	}
}

// TestUnknownTeamKey checks that a team key no team has is an invalid team, and that
// nothing is created.
func TestUnknownTeamKey(t *testing.T) {
	t.Parallel()
	up := fakeLinear(t, map[string]reply{"TeamByKey": {body: `{"data": {"teams": {"nodes": []}}}`}})
	_, err := invoke(t, "linear_create_issue", newCall(t, up, testKey), `{"team": "NOPE", "title": "x"}`)
	var se *switchboard.Error
	if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != "team" {
		t.Fatalf("error = %v, want invalid on team", err)
	}
	checkSent(t, up, call{Operation: "TeamByKey", Variables: map[string]any{"key": "NOPE"}})
}

// TestBadInput checks that bad arguments fail as invalid on the field at fault before
// anything is sent.
func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, args, wantField string
	}{
		{name: "issue reference that is neither", tool: "linear_get_issue", args: `{"issue": "123"}`, wantField: "issue"},
		{name: "issue reference with a query", tool: "linear_get_issue", args: `{"issue": "ENG-1 } mutation {"}`, wantField: "issue"},
		{name: "team that is not a key", tool: "linear_list_issues", args: `{"team": "Engineering team"}`, wantField: "team"},
		{name: "assignee that is no one", tool: "linear_list_issues", args: `{"assignee": "Ada"}`, wantField: "assignee"},
		{name: "state type outside the enum", tool: "linear_list_issues", args: `{"state_type": "done"}`, wantField: "state_type"},
		{name: "limit over the maximum", tool: "linear_list_teams", args: `{"limit": 101}`, wantField: "limit"},
		{name: "foreign cursor", tool: "linear_list_projects", args: `{"cursor": "abc"}`, wantField: "cursor"},
		{name: "blank search", tool: "linear_search_issues", args: `{"query": "   "}`, wantField: "query"},
		{name: "search team that is not an ID", tool: "linear_search_issues", args: `{"query": "x", "team_id": "ENG"}`, wantField: "team_id"},
		{name: "blank title", tool: "linear_create_issue", args: `{"team": "ENG", "title": "  "}`, wantField: "title"},
		{name: "priority outside the enum", tool: "linear_create_issue", args: `{"team": "ENG", "title": "x", "priority": 5}`, wantField: "priority"},
		{name: "state that is not an ID", tool: "linear_create_issue", args: `{"team": "ENG", "title": "x", "state_id": "In Progress"}`, wantField: "state_id"},
		{name: "label that is not an ID", tool: "linear_update_issue", args: `{"issue": "ENG-1", "label_ids": ["Bug"]}`, wantField: "label_ids"},
		{name: "bad due date", tool: "linear_update_issue", args: `{"issue": "ENG-1", "due_date": "31/12/2026"}`, wantField: "due_date"},
		{name: "unassign and assign", tool: "linear_update_issue", args: `{"issue": "ENG-1", "unassign": true, "assignee_id": "5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a"}`, wantField: "unassign"},
		{name: "update with nothing to change", tool: "linear_update_issue", args: `{"issue": "ENG-1", "unassign": false}`, wantField: "arguments"},
		{name: "blank comment", tool: "linear_add_comment", args: `{"issue": "ENG-1", "body": " \n"}`, wantField: "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := fakeLinear(t, map[string]reply{})
			_, err := invoke(t, tc.tool, newCall(t, up, testKey), tc.args)
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
