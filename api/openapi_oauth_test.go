package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// oauthAPI is a description of an API whose scheme is OAuth 2.0 (FLOW: the
// authorization code flow, or client credentials) at the authorization server AS.
const oauthAPI = `{"openapi":"3.0.3","info":{"title":"TITLE","version":"1"},
"security":[{"oauth":["read"]}],
"components":{"securitySchemes":{"oauth":{"type":"oauth2","flows":{FLOW}}}},
"paths":{"/records":{"get":{"operationId":"listRecords","responses":{"200":{"description":"ok"}}}}}}`

// authServer is an API's authorization server: it issues a code's tokens (checking the
// PKCE verifier against the challenge of the authorization URL), refreshes them, and
// gives its client credentials' tokens, each token short-lived so the next call renews
// it. It records every grant.
type authServer struct {
	*httptest.Server
	mu        sync.Mutex
	challenge string
	grants    []string
	issued    int
}

func newAuthServer(t *testing.T) *authServer {
	as := &authServer{}
	as.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.URL.Path != "/token" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		as.mu.Lock()
		defer as.mu.Unlock()
		grant := r.PostForm.Get("grant_type")
		as.grants = append(as.grants, grant+" "+id)
		w.Header().Set("Content-Type", "application/json")
		refuse := func() {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case grant == "authorization_code" && id == "crm-client" && secret == "crm-secret" && r.PostForm.Get("code") == "code-1" &&
			base64.RawURLEncoding.EncodeToString(sum[:]) == as.challenge && r.PostForm.Get("redirect_uri") == "http://hub.example.test/oauth/callback":
			_, _ = io.WriteString(w, `{"access_token":"at-1","token_type":"bearer","refresh_token":"rt-1","expires_in":60}`)
		case grant == "refresh_token" && id == "crm-client" && secret == "crm-secret" && r.PostForm.Get("refresh_token") == "rt-1":
			_, _ = io.WriteString(w, `{"access_token":"at-2","token_type":"bearer","expires_in":3600}`)
		case grant == "client_credentials" && id == "cc-client" && secret == "cc-secret":
			as.issued++
			_, _ = fmt.Fprintf(w, `{"access_token":"cc-%d","token_type":"bearer","expires_in":60}`, as.issued)
		default:
			refuse()
		}
	}))
	t.Cleanup(func() { testwait.CloseServer(t, as.Server) })
	return as
}

// TestOpenAPIOAuth: a tenant's API whose scheme is OAuth 2.0 is connected through the
// hub's OAuth machinery with the OAuth app the admin gave (its secret sealed, never
// answered): the authorization code flow (PKCE, the hub's callback, the token renewed
// with its refresh token when a call finds it expiring), and client credentials (a
// token asked for when connecting, and asked for again when it expires). An app for a
// scheme that is not OAuth 2.0 is a 400 naming client_id.
func TestOpenAPIOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	as := newAuthServer(t)
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[]`)
	}))
	t.Cleanup(func() { testwait.CloseServer(t, up) })

	log := slog.New(slog.DiscardHandler)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	transports := &providers.Transports{}
	svc := connections.NewService(connections.NewStore(db, kr), reg, transports, nil)
	svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "http://hub.example.test/oauth/callback", Logger: log})
	guard, err := egress.NewGuard(false, []string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	apis, err := openapis.New(openapis.Options{Store: openapis.NewStore(db), Connections: svc, Registry: reg, Transports: transports, Guard: guard, Keyring: kr, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Transports: transports, Logger: log, ArgsKey: []byte("k")})
	svc.Subscribe(rtr.Forget)
	srv := httptest.NewServer(api.New(api.Options{Registry: reg, Tenants: ts, Connections: svc, Tools: rtr, OpenAPI: apis, Logger: log}))
	t.Cleanup(func() { testwait.CloseServer(t, srv) })
	ten, err := ts.CreateTenant(ctx, "oauth-apis", "O")
	if err != nil {
		t.Fatal(err)
	}
	_, key, _, err := ts.CreateUserWithKey(ctx, ten.ID, "o@o.test", switchboard.RoleOwner, "k")
	if err != nil {
		t.Fatal(err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		for _, secret := range []string{"crm-secret", "cc-secret", "rt-1", "at-1", "at-2", "cc-1", "cc-2"} {
			if strings.Contains(string(raw), `"`+secret) {
				t.Errorf("%s %s answered %s: %s", method, path, secret, raw)
			}
		}
		return res.StatusCode, string(raw)
	}
	desc := func(title, flow string) string {
		return strings.NewReplacer("TITLE", title, "FLOW", flow).Replace(oauthAPI)
	}
	code := desc("CRM", `"authorizationCode":{"authorizationUrl":"https://crm.example.test/authorize","tokenUrl":"`+as.URL+`/token","scopes":{"read":"Read"}}`)
	cc := desc("Billing", `"clientCredentials":{"tokenUrl":"`+as.URL+`/token","scopes":{"read":"Read"}}`)

	for _, tt := range []struct{ name, body, field string }{
		{"an app for an API key scheme", `{"name":"notes","base_url":"` + up.URL + `","description":` + quote(notesDescription) + `,"client_id":"x","client_secret":"y"}`, "client_id"},
		{"a secret without its client", `{"name":"crm","base_url":"` + up.URL + `","description":` + code + `,"client_secret":"crm-secret"}`, "client_id"},
		{"client credentials without a secret", `{"name":"billing","base_url":"` + up.URL + `","description":` + cc + `,"client_id":"cc-client"}`, "client_secret"},
	} {
		if status, body := do("POST", "/api/openapi-providers", tt.body); status != http.StatusBadRequest || !strings.Contains(body, `"field":"`+tt.field+`"`) {
			t.Errorf("%s: %d %s, want 400 on %s", tt.name, status, body, tt.field)
		}
	}
	if status, body := do("POST", "/api/openapi-providers", `{"name":"crm","base_url":"`+up.URL+`","description":`+code+`,"client_id":"crm-client","client_secret":"crm-secret"}`); status != http.StatusCreated ||
		!strings.Contains(body, `"auth_kinds":["oauth2","api_key"]`) || !strings.Contains(body, `"client_id":"crm-client"`) {
		t.Fatalf("add crm: %d %s", status, body)
	}
	if status, body := do("POST", "/api/openapi-providers", `{"name":"billing","base_url":"`+up.URL+`","description":`+cc+`,"client_id":"cc-client","client_secret":"cc-secret"}`); status != http.StatusCreated ||
		!strings.Contains(body, `"auth_kinds":["client_credentials"]`) {
		t.Fatalf("add billing: %d %s", status, body)
	}

	// The authorization code flow.
	status, body := do("POST", "/api/connections/crm/authorize", `{}`)
	if status != http.StatusOK {
		t.Fatalf("authorize: %d %s", status, body)
	}
	var started struct {
		URL string `json:"authorization_url"`
	}
	if err := json.Unmarshal([]byte(body), &started); err != nil {
		t.Fatal(err)
	}
	au, err := url.Parse(started.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := au.Query()
	if au.Host != "crm.example.test" || q.Get("client_id") != "crm-client" || q.Get("redirect_uri") != "http://hub.example.test/oauth/callback" ||
		q.Get("code_challenge_method") != "S256" || q.Get("scope") != "read" || q.Get("state") == "" || q.Get("response_type") != "code" {
		t.Fatalf("authorization URL = %s", started.URL)
	}
	as.mu.Lock()
	as.challenge = q.Get("code_challenge")
	as.mu.Unlock()
	if status, body := do("GET", "/oauth/callback?state="+url.QueryEscape(q.Get("state"))+"&code=code-1", ""); status != http.StatusCreated || !strings.Contains(body, `"provider":"openapi"`) || !strings.Contains(body, `"auth_kind":"oauth2"`) {
		t.Fatalf("callback: %d %s", status, body)
	}
	if status, body := do("POST", "/api/tools/crm_list_records/call", `{"arguments":{}}`); status != http.StatusOK {
		t.Errorf("call crm: %d %s", status, body)
	}

	// Client credentials.
	if status, body := do("POST", "/api/connections", `{"provider":"billing"}`); status != http.StatusCreated || !strings.Contains(body, `"auth_kind":"client_credentials"`) {
		t.Fatalf("connect billing: %d %s", status, body)
	}
	if status, body := do("POST", "/api/tools/billing_list_records/call", `{"arguments":{}}`); status != http.StatusOK {
		t.Errorf("call billing: %d %s", status, body)
	}

	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	want := []string{"/records Bearer at-2", "/records Bearer cc-2"} // each token expired within minutes: renewed by the call
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the API got %q, want %q", got, want)
	}
	as.mu.Lock()
	grants := strings.Join(as.grants, ", ")
	as.mu.Unlock()
	if grants != "authorization_code crm-client, refresh_token crm-client, client_credentials cc-client, client_credentials cc-client" {
		t.Errorf("token requests: %s", grants)
	}
}
