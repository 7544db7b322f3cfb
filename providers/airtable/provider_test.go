package airtable_test

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
	"github.com/switchboard-hub/switchboard/providers/airtable"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := airtable.Spec()
	if spec.BaseURL != "https://api.airtable.com/v0" || spec.TokenHelp == "" || spec.Verify == nil || spec.OAuth != nil {
		t.Errorf("spec base URL %q, token help %q, verify set %v, oauth %v", spec.BaseURL, spec.TokenHelp, spec.Verify != nil, spec.OAuth)
	}
	if diff := cmp.Diff([]providers.AuthKind{providers.AuthAPIKey}, spec.AuthKinds); diff != "" {
		t.Errorf("auth kinds (-want +got):\n%s", diff)
	}
	var names []string
	for name := range tools(t) {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"airtable_create_records", "airtable_delete_records", "airtable_get_base_schema", "airtable_get_record",
		"airtable_list_bases", "airtable_list_records", "airtable_update_records"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestHints pins each tool's annotations: they decide whether a client asks before a
// call and whether the client kit retries it.
func TestHints(t *testing.T) {
	t.Parallel()
	read := providers.Hints{ReadOnly: true, Idempotent: true}
	for name, want := range map[string]providers.Hints{
		"airtable_list_bases": read, "airtable_get_base_schema": read, "airtable_list_records": read, "airtable_get_record": read,
		"airtable_create_records": {},
		"airtable_update_records": {Destructive: true, Idempotent: true},
		"airtable_delete_records": {Destructive: true},
	} {
		tool := tools(t)[name]
		if tool == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		if tool.Info.Hints != want {
			t.Errorf("%s hints = %+v, want %+v", name, tool.Info.Hints, want)
		}
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, airtable.Spec())
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(airtable.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("airtable"))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		body     string
		want     providers.Account
		wantCode switchboard.Code
	}{
		{name: "user with email and scopes", status: http.StatusOK,
			body: `{"id": "usrL2PNC5o3H4lBEi", "email": "ada@example.com", "scopes": ["data.records:read", "data.records:write", "schema.bases:read", "user.email:read"]}`,
			want: providers.Account{ID: "usrL2PNC5o3H4lBEi", Label: "ada@example.com",
				Scopes: []string{"data.records:read", "data.records:write", "schema.bases:read", "user.email:read"}}},
		{name: "without user.email:read the user ID", status: http.StatusOK,
			body: `{"id": "usrL2PNC5o3H4lBEi", "scopes": ["data.records:read"]}`,
			want: providers.Account{ID: "usrL2PNC5o3H4lBEi", Label: "usrL2PNC5o3H4lBEi", Scopes: []string{"data.records:read"}}},
		{name: "no user in the answer", status: http.StatusOK, body: `{}`, wantCode: switchboard.CodeUpstream},
		{name: "invalid token", status: http.StatusUnauthorized,
			body:     `{"error": {"type": "AUTHENTICATION_REQUIRED", "message": "Authentication required"}}`,
			wantCode: switchboard.CodeReconnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, providertest.Answer(tc.status, nil, tc.body))
			spec := airtable.Spec()
			got, err := spec.Verify(context.Background(), providertest.NewCall(t, &spec, up.URL, testToken))
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
			req := up.Last(t)
			if req.Method != http.MethodGet || req.Path != "/meta/whoami" || req.Header.Get("Authorization") != "Bearer "+testToken {
				t.Errorf("request = %s %s (Authorization %q), want GET /meta/whoami with the token", req.Method, req.Path, req.Header.Get("Authorization"))
			}
		})
	}
}

// TestTableNameIsOnePathSegment checks that a table name with a slash or spaces stays
// one escaped path segment and cannot reach another route.
func TestTableNameIsOnePathSegment(t *testing.T) {
	t.Parallel()
	var raw string
	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		raw = r.URL.EscapedPath()
		providertest.Answer(http.StatusOK, nil, `{"records": []}`)(w, r)
	})
	_, err := providertest.Invoke(t, tools(t)["airtable_list_records"], newCall(t, up.URL), `{"base_id": "appLkNDICXNqxSDhG", "table": "../meta/whoami"}`)
	if err != nil {
		t.Fatalf("list_records: %v", err)
	}
	if want := "/appLkNDICXNqxSDhG/..%2Fmeta%2Fwhoami"; raw != want {
		t.Errorf("escaped path = %q, want %q", raw, want)
	}
}

// TestFailures maps Airtable's error envelopes, answered the way Airtable answers
// them, to codes an agent can act on, and checks that reads are retried and writes
// sent once.
func TestFailures(t *testing.T) {
	t.Parallel()
	const (
		list   = `{"base_id": "appLkNDICXNqxSDhG", "table": "Tasks"}`
		create = `{"base_id": "appLkNDICXNqxSDhG", "table": "Tasks", "records": [{"fields": {"Name": "x"}}]}`
		del    = `{"base_id": "appLkNDICXNqxSDhG", "table": "Tasks", "record_ids": ["rec560UJdUtocSouk"]}`
	)
	errBody := func(typ, msg string) string {
		return `{"error": {"type": "` + typ + `", "message": "` + msg + `"}}`
	}
	for _, tc := range []struct {
		name         string
		tool, args   string
		status       int
		header       http.Header
		body         string
		wantCode     switchboard.Code
		wantReason   string
		wantIn       string
		wantRetry    time.Duration
		wantAttempts int
	}{
		{name: "401 authentication required", tool: "airtable_list_records", args: list, status: 401,
			body:     errBody("AUTHENTICATION_REQUIRED", "Authentication required"),
			wantCode: switchboard.CodeReconnect, wantReason: "AUTHENTICATION_REQUIRED", wantIn: "reconnect Airtable", wantAttempts: 1},
		{name: "403 no permission or no such base", tool: "airtable_create_records", args: create, status: 403,
			body:     errBody("INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND", "Invalid permissions, or the requested model was not found. Check that both your user and your token have the required permissions, and that the model names and/or ids are correct."),
			wantCode: switchboard.CodeForbidden, wantReason: "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND", wantIn: "under Access", wantAttempts: 1},
		{name: "404 with a bare error string", tool: "airtable_delete_records", args: del, status: 404, body: `{"error": "NOT_FOUND"}`,
			wantCode: switchboard.CodeNotFound, wantReason: "NOT_FOUND", wantIn: "check the base", wantAttempts: 1},
		{name: "422 unknown field", tool: "airtable_create_records", args: create, status: 422,
			body:     errBody("UNKNOWN_FIELD_NAME", `Unknown field name: \"Nmae\"`),
			wantCode: switchboard.CodeInvalid, wantReason: "UNKNOWN_FIELD_NAME", wantIn: "get_base_schema lists", wantAttempts: 1},
		{name: "422 bad formula", tool: "airtable_list_records", args: list, status: 422,
			body:     errBody("INVALID_FILTER_BY_FORMULA", "The formula for filtering records is invalid: Unknown field names: stauts"),
			wantCode: switchboard.CodeInvalid, wantReason: "INVALID_FILTER_BY_FORMULA", wantIn: "field names go in braces", wantAttempts: 1},
		{name: "429 without Retry-After waits 30 s", tool: "airtable_create_records", args: create, status: 429,
			body:     errBody("RATE_LIMIT_REACHED", "Rate limit exceeded. Please try again later"),
			wantCode: switchboard.CodeRateLimited, wantReason: "RATE_LIMIT_REACHED", wantIn: "30 seconds", wantRetry: 30 * time.Second, wantAttempts: 1},
		{name: "429 with a longer Retry-After keeps it", tool: "airtable_list_records", args: list, status: 429,
			header: http.Header{"Retry-After": {"45"}}, body: errBody("RATE_LIMIT_REACHED", "Rate limit exceeded. Please try again later"),
			wantCode: switchboard.CodeRateLimited, wantReason: "RATE_LIMIT_REACHED", wantRetry: 45 * time.Second, wantAttempts: 1},
		{name: "500 on a read is retried", tool: "airtable_list_records", args: list, status: 500,
			body:     errBody("SERVER_ERROR", "Try again. If the problem persists, contact support."),
			wantCode: switchboard.CodeUpstream, wantReason: "SERVER_ERROR", wantIn: "try again shortly", wantAttempts: 3},
		{name: "503 on a create is sent once", tool: "airtable_create_records", args: create, status: 503,
			body:     errBody("SERVICE_UNAVAILABLE", "Service unavailable"),
			wantCode: switchboard.CodeUpstream, wantReason: "SERVICE_UNAVAILABLE", wantAttempts: 1},
		{name: "502 from a proxy, not JSON", tool: "airtable_delete_records", args: del, status: 502,
			header: http.Header{"Content-Type": {"text/html"}}, body: "<html>Bad Gateway</html>",
			wantCode: switchboard.CodeUpstream, wantIn: "Bad Gateway", wantAttempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, providertest.Answer(tc.status, tc.header, tc.body))
			_, err := providertest.Invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v (%T), want an UpstreamError", err, err)
			}
			if ue.Code != tc.wantCode || ue.Reason != tc.wantReason || ue.Status != tc.status {
				t.Errorf("error = code %q reason %q status %d, want %q %q %d", ue.Code, ue.Reason, ue.Status, tc.wantCode, tc.wantReason, tc.status)
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

// TestBadInput checks that bad arguments fail as invalid on the field at fault, by the
// schema or by the operation, before anything is sent.
func TestBadInput(t *testing.T) {
	t.Parallel()
	const base = `"base_id": "appLkNDICXNqxSDhG", "table": "Tasks"`
	eleven := strings.TrimSuffix(strings.Repeat(`{"fields": {"Name": "x"}},`, 11), ",")
	for _, tc := range []struct {
		name, tool, args, wantField string
	}{
		{name: "base ID with a path in it", tool: "airtable_get_base_schema", args: `{"base_id": "../meta/whoami"}`, wantField: "base_id"},
		{name: "base ID of the wrong kind", tool: "airtable_list_records", args: `{"base_id": "tbltp8DGLhqbUmjK1", "table": "Tasks"}`, wantField: "base_id"},
		{name: "empty table", tool: "airtable_list_records", args: `{"base_id": "appLkNDICXNqxSDhG", "table": ""}`, wantField: "table"},
		{name: "record ID with a path", tool: "airtable_get_record", args: `{` + base + `, "record_id": "rec560UJdUtocSouk/../x"}`, wantField: "record_id"},
		{name: "no records to create", tool: "airtable_create_records", args: `{` + base + `, "records": []}`, wantField: "records"},
		{name: "eleven records to create", tool: "airtable_create_records", args: `{` + base + `, "records": [` + eleven + `]}`, wantField: "records"},
		{name: "a record without fields", tool: "airtable_create_records", args: `{` + base + `, "records": [{"fields": {}}]}`, wantField: "records.0.fields"},
		{name: "update with a bad record ID", tool: "airtable_update_records", args: `{` + base + `, "records": [{"id": "recX", "fields": {"a": 1}}]}`, wantField: "records.0.id"},
		{name: "update without changes", tool: "airtable_update_records", args: `{` + base + `, "records": [{"id": "rec560UJdUtocSouk", "fields": {}}]}`, wantField: "records.0.fields"},
		{name: "delete a bad record ID", tool: "airtable_delete_records", args: `{` + base + `, "record_ids": ["rec560UJdUtocSouk", "recs&x=1"]}`, wantField: "record_ids.1"},
		{name: "delete nothing", tool: "airtable_delete_records", args: `{` + base + `, "record_ids": []}`, wantField: "record_ids"},
		{name: "sort direction outside the enum", tool: "airtable_list_records", args: `{` + base + `, "sort": [{"field": "a", "direction": "up"}]}`, wantField: "sort.0.direction"},
		{name: "limit over Airtable's maximum", tool: "airtable_list_records", args: `{` + base + `, "limit": 101}`, wantField: "limit"},
		{name: "foreign cursor", tool: "airtable_list_records", args: `{` + base + `, "cursor": "itrYhG2OAhH1w3L1d"}`, wantField: "cursor"},
		{name: "unknown argument", tool: "airtable_list_records", args: `{` + base + `, "pageSize": 5}`, wantField: "pageSize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, `{}`))
			_, err := providertest.Invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
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
