package hubspot_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hubspot"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := hubspot.Spec()
	if spec.BaseURL != "https://api.hubapi.com" || spec.TokenHelp == "" || spec.Verify == nil {
		t.Errorf("spec base URL %q, token help %q, verify set %v", spec.BaseURL, spec.TokenHelp, spec.Verify != nil)
	}
	wantOAuth := &providers.OAuth2{
		AuthURL: "https://app.hubspot.com/oauth/authorize", TokenURL: "https://api.hubapi.com/oauth/v1/token",
		Scopes: []string{"crm.objects.contacts.read", "crm.objects.contacts.write", "crm.objects.companies.read",
			"crm.objects.companies.write", "crm.objects.deals.read", "crm.objects.deals.write"},
	}
	if diff := cmp.Diff(wantOAuth, spec.OAuth); diff != "" {
		t.Errorf("oauth (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2}, spec.AuthKinds); diff != "" {
		t.Errorf("auth kinds (-want +got):\n%s", diff)
	}
	var names []string
	for name := range tools(t) {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"hubspot_create_company", "hubspot_create_contact", "hubspot_create_deal", "hubspot_create_note",
		"hubspot_get_company", "hubspot_get_contact", "hubspot_get_deal", "hubspot_list_deal_pipelines", "hubspot_list_properties",
		"hubspot_search_companies", "hubspot_search_contacts", "hubspot_search_deals",
		"hubspot_update_company", "hubspot_update_contact", "hubspot_update_deal"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	// Every scope an operation needs is one the OAuth flow asks for.
	for _, tool := range tools(t) {
		for _, s := range tool.Info.Scopes {
			if !slices.Contains(spec.OAuth.Scopes, s) {
				t.Errorf("%s needs scope %s, which the OAuth flow does not request", tool.Name, s)
			}
		}
	}
}

// TestHints pins each tool's annotations: they decide whether a client asks before a
// call and whether the client kit retries it.
func TestHints(t *testing.T) {
	t.Parallel()
	read := providers.Hints{ReadOnly: true, Idempotent: true}
	update := providers.Hints{Destructive: true, Idempotent: true}
	want := map[string]providers.Hints{"hubspot_create_note": {}, "hubspot_list_deal_pipelines": read, "hubspot_list_properties": read}
	for _, k := range []string{"contact", "company", "deal"} {
		plural := map[string]string{"contact": "contacts", "company": "companies", "deal": "deals"}[k]
		want["hubspot_search_"+plural] = read
		want["hubspot_get_"+k] = read
		want["hubspot_create_"+k] = providers.Hints{}
		want["hubspot_update_"+k] = update
	}
	got := map[string]providers.Hints{}
	for name, tool := range tools(t) {
		got[name] = tool.Info.Hints
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hints (-want +got):\n%s", diff)
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, hubspot.Spec())
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(hubspot.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("hubspot"))
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
		{name: "account details", status: http.StatusOK,
			body: `{"portalId": 62515, "accountType": "STANDARD", "timeZone": "Europe/Berlin", "companyCurrency": "EUR",
				"additionalCurrencies": [], "utcOffset": "+01:00", "utcOffsetMilliseconds": 3600000, "uiDomain": "app-eu1.hubspot.com", "dataHostingLocation": "eu1"}`,
			want: providers.Account{ID: "62515", Label: "HubSpot account 62515",
				Meta: map[string]string{"portal_id": "62515", "ui_domain": "app-eu1.hubspot.com", "time_zone": "Europe/Berlin"}}},
		{name: "a sandbox says so", status: http.StatusOK, body: `{"portalId": 7788, "accountType": "DEVELOPER_TEST"}`,
			want: providers.Account{ID: "7788", Label: "HubSpot account 7788 (DEVELOPER_TEST)", Meta: map[string]string{"portal_id": "7788"}}},
		{name: "no portal", status: http.StatusOK, body: `{}`, wantCode: switchboard.CodeUpstream},
		{name: "expired token", status: http.StatusUnauthorized,
			body:     `{"status": "error", "message": "The OAuth token used to make this call expired 2 hour(s) ago.", "correlationId": "5a2c1f0e-8c1b-4f7a-9d3e-2b6a7c8d9e0f", "category": "EXPIRED_AUTHENTICATION"}`,
			wantCode: switchboard.CodeReconnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, providertest.Answer(tc.status, nil, tc.body))
			spec := hubspot.Spec()
			got, err := spec.Verify(context.Background(), providertest.NewCall(t, &spec, up.URL, testToken))
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
			req := up.Last(t)
			if req.Method != http.MethodGet || req.Path != "/account-info/v3/details" || req.Header.Get("Authorization") != "Bearer "+testToken {
				t.Errorf("request = %s %s (Authorization %q), want GET /account-info/v3/details with the token", req.Method, req.Path, req.Header.Get("Authorization"))
			}
		})
	}
}

// TestNoteTimestampDefaultsToNow checks that a note without a timestamp is placed at
// the time of the call.
func TestNoteTimestampDefaultsToNow(t *testing.T) {
	t.Parallel()
	up := providertest.NewUpstream(t, providertest.Answer(http.StatusCreated, nil, noteReply))
	before := time.Now().UTC().Truncate(time.Second)
	if _, err := providertest.Invoke(t, tools(t)["hubspot_create_note"], newCall(t, up.URL), `{"body": "x", "company_ids": ["1011"]}`); err != nil {
		t.Fatalf("create_note: %v", err)
	}
	after := time.Now().UTC()
	var body struct {
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(up.Last(t).Body, &body); err != nil {
		t.Fatalf("decode request body: %v", err)
	}
	ts, err := time.Parse(time.RFC3339, body.Properties["hs_timestamp"])
	if err != nil || ts.Before(before) || ts.After(after) {
		t.Errorf("hs_timestamp = %q (%v), want a time between %v and %v", body.Properties["hs_timestamp"], err, before, after)
	}
}

// TestIDValueIsOnePathSegment checks that an id_property value stays one escaped path
// segment and cannot reach another route.
func TestIDValueIsOnePathSegment(t *testing.T) {
	t.Parallel()
	var raw string
	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		raw = r.URL.EscapedPath()
		providertest.Answer(http.StatusOK, nil, contactReply)(w, r)
	})
	_, err := providertest.Invoke(t, tools(t)["hubspot_get_contact"], newCall(t, up.URL), `{"id": "../../owners/v2?x", "id_property": "email"}`)
	if err != nil {
		t.Fatalf("get_contact: %v", err)
	}
	if want := "/crm/v3/objects/contacts/..%2F..%2Fowners%2Fv2%3Fx"; raw != want {
		t.Errorf("escaped path = %q, want %q", raw, want)
	}
}

// TestFailures maps HubSpot's error envelopes, answered the way HubSpot answers them,
// to codes an agent can act on, and checks that reads are retried and writes sent once.
func TestFailures(t *testing.T) {
	t.Parallel()
	const (
		get    = `{"id": "51"}`
		create = `{"properties": {"email": "ada@example.com"}}`
		search = `{"query": "ada"}`
		corrID = "aeb5f871-7f07-4993-9211-075dc63e7cbf"
	)
	errBody := func(category, msg string) string {
		return `{"status": "error", "message": "` + msg + `", "correlationId": "` + corrID + `", "category": "` + category + `"}`
	}
	rateBody := func(policy, msg string) string {
		return `{"status": "error", "message": "` + msg + `", "errorType": "RATE_LIMIT", "correlationId": "` + corrID + `", "policyName": "` + policy + `", "groupName": "publicapi"}`
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
		{name: "401 invalid authentication", tool: "hubspot_get_contact", args: get, status: 401,
			body:     errBody("INVALID_AUTHENTICATION", "Authentication credentials not found."),
			wantCode: switchboard.CodeReconnect, wantReason: "INVALID_AUTHENTICATION", wantIn: "reconnect HubSpot", wantAttempts: 1},
		{name: "403 missing scopes", tool: "hubspot_create_contact", args: create, status: 403,
			body:     errBody("MISSING_SCOPES", "This app hasn't been granted all required scopes to make this call."),
			wantCode: switchboard.CodeForbidden, wantReason: "MISSING_SCOPES", wantIn: "lacks a scope", wantAttempts: 1},
		{name: "404 object not found", tool: "hubspot_get_contact", args: get, status: 404,
			body:     errBody("OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric."),
			wantCode: switchboard.CodeNotFound, wantReason: "OBJECT_NOT_FOUND", wantIn: corrID, wantAttempts: 1},
		{name: "409 contact exists", tool: "hubspot_create_contact", args: create, status: 409,
			body:     errBody("CONFLICT", "Contact already exists. Existing ID: 51"),
			wantCode: switchboard.CodeConflict, wantReason: "CONFLICT", wantIn: "Existing ID: 51", wantAttempts: 1},
		{name: "400 validation error", tool: "hubspot_create_contact", args: create, status: 400,
			body:     errBody("VALIDATION_ERROR", `Property values were not valid: [{\"isValid\":false,\"message\":\"Property \\\"favorite_color\\\" does not exist\",\"error\":\"PROPERTY_DOESNT_EXIST\",\"name\":\"favorite_color\"}]`),
			wantCode: switchboard.CodeInvalid, wantReason: "VALIDATION_ERROR", wantIn: "list_properties", wantAttempts: 1},
		{name: "429 ten-secondly window with its interval", tool: "hubspot_create_contact", args: create, status: 429,
			header:   http.Header{"X-Hubspot-Ratelimit-Interval-Milliseconds": {"10000"}, "X-Hubspot-Ratelimit-Max": {"100"}, "X-Hubspot-Ratelimit-Remaining": {"0"}},
			body:     rateBody("TEN_SECONDLY_ROLLING", "You have reached your ten_secondly_rolling limit."),
			wantCode: switchboard.CodeRateLimited, wantReason: "RATE_LIMIT", wantIn: "rolling window", wantRetry: 10 * time.Second, wantAttempts: 1},
		{name: "429 secondly search limit", tool: "hubspot_search_contacts", args: search, status: 429,
			header: http.Header{"Retry-After": {"12"}}, body: rateBody("SECONDLY", "You have reached your secondly limit."),
			wantCode: switchboard.CodeRateLimited, wantReason: "RATE_LIMIT", wantRetry: 12 * time.Second, wantAttempts: 1},
		{name: "500 on a read is retried", tool: "hubspot_search_contacts", args: search, status: 500,
			body:     errBody("INTERNAL_ERROR", "internal error"),
			wantCode: switchboard.CodeUpstream, wantReason: "INTERNAL_ERROR", wantIn: "try again shortly", wantAttempts: 3},
		{name: "503 on a create is sent once", tool: "hubspot_create_contact", args: create, status: 503,
			body:     errBody("SERVICE_UNAVAILABLE", "Service unavailable"),
			wantCode: switchboard.CodeUpstream, wantReason: "SERVICE_UNAVAILABLE", wantAttempts: 1},
		{name: "502 from a proxy, not JSON", tool: "hubspot_create_note", args: `{"body": "x", "deal_ids": ["2001"]}`, status: 502,
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
	for _, tc := range []struct {
		name, tool, args, wantField string
	}{
		{name: "record ID with a path", tool: "hubspot_get_contact", args: `{"id": "51/../52"}`, wantField: "id"},
		{name: "email without id_property", tool: "hubspot_update_contact", args: `{"id": "ada@example.com", "properties": {"a": "b"}}`, wantField: "id"},
		{name: "id_property not a name", tool: "hubspot_get_contact", args: `{"id": "x", "id_property": "e-mail"}`, wantField: "id_property"},
		{name: "property name with a comma", tool: "hubspot_get_deal", args: `{"id": "1", "properties": ["amount,x"]}`, wantField: "properties"},
		{name: "create without properties", tool: "hubspot_create_company", args: `{"properties": {}}`, wantField: "properties"},
		{name: "create with a bad property name", tool: "hubspot_create_company", args: `{"properties": {"Company Name": "x"}}`, wantField: "properties"},
		{name: "contact with a contact", tool: "hubspot_create_contact", args: `{"properties": {"email": "a@b.c"}, "associate_with": [{"object_type": "contacts", "id": "51"}]}`, wantField: "associate_with.0.object_type"},
		{name: "association ID not numeric", tool: "hubspot_create_deal", args: `{"properties": {"dealname": "x"}, "associate_with": [{"object_type": "companies", "id": "acme"}]}`, wantField: "associate_with.0.id"},
		{name: "update with nothing", tool: "hubspot_update_deal", args: `{"id": "2001", "properties": {}}`, wantField: "properties"},
		{name: "IN without values", tool: "hubspot_search_deals", args: `{"filters": [{"property": "dealstage", "operator": "IN", "value": "x"}]}`, wantField: "filters.0.values"},
		{name: "BETWEEN without high value", tool: "hubspot_search_deals", args: `{"filters": [{"property": "amount", "operator": "BETWEEN", "value": "1"}]}`, wantField: "filters.0.high_value"},
		{name: "EQ without value", tool: "hubspot_search_contacts", args: `{"filters": [{"property": "email", "operator": "EQ"}]}`, wantField: "filters.0.value"},
		{name: "HAS_PROPERTY with a value", tool: "hubspot_search_contacts", args: `{"filters": [{"property": "email", "operator": "HAS_PROPERTY", "value": "x"}]}`, wantField: "filters.0.value"},
		{name: "operator outside the enum", tool: "hubspot_search_contacts", args: `{"filters": [{"property": "email", "operator": "LIKE", "value": "x"}]}`, wantField: "filters.0.operator"},
		{name: "limit over 100", tool: "hubspot_search_companies", args: `{"limit": 101}`, wantField: "limit"},
		{name: "foreign cursor", tool: "hubspot_search_companies", args: `{"cursor": "30"}`, wantField: "cursor"},
		{name: "note on nothing", tool: "hubspot_create_note", args: `{"body": "x"}`, wantField: "contact_ids"},
		{name: "note on a bad deal ID", tool: "hubspot_create_note", args: `{"body": "x", "contact_ids": ["51"], "deal_ids": ["2001", "x"]}`, wantField: "deal_ids.1"},
		{name: "note with a bad timestamp", tool: "hubspot_create_note", args: `{"body": "x", "contact_ids": ["51"], "timestamp": "yesterday"}`, wantField: "timestamp"},
		{name: "empty note", tool: "hubspot_create_note", args: `{"body": "", "contact_ids": ["51"]}`, wantField: "body"},
		{name: "properties of tickets", tool: "hubspot_list_properties", args: `{"object_type": "tickets"}`, wantField: "object_type"},
		{name: "unknown argument", tool: "hubspot_get_contact", args: `{"id": "51", "idProperty": "email"}`, wantField: "idProperty"},
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
