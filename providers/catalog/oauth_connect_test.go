package catalog

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestCatalogOAuthConnect connects every catalog API that connects with OAuth as a
// workspace member would, in one click, with the deployment's OAuth app the operator
// set: against a real authorization server (internal/oauthtest) serving the preset's
// authorization and token endpoints (their paths; the host is the test's), the
// authorization URL must carry the app's client, PKCE and exactly the scopes of the
// API's default tools; the person consents, the code is exchanged (with the PKCE
// verifier) for a token, the connection is made with those scopes, and a default tool
// called through the router on it reaches the API (a fake made from its description)
// with that token.
func TestCatalogOAuthConnect(t *testing.T) {
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.SQLite(t)
	ctx := context.Background()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	ten, err := ts.CreateTenant(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	person := func(email string, role switchboard.Role) switchboard.Principal {
		u, err := ts.CreateUser(ctx, ten.ID, email, role)
		if err != nil {
			t.Fatal(err)
		}
		return switchboard.Principal{TenantID: ten.ID, TenantSlug: ten.Slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: role}
	}
	operator := person("ops@acme.test", switchboard.RoleOwner)
	operator.Operator = true
	member := person("ada@acme.test", switchboard.RoleMember)
	writer := audit.NewWriter(db, audit.WriterOptions{})
	t.Cleanup(func() { _ = writer.Close(context.Background()) })
	const redirect = "https://hub.example.com/oauth/callback"
	tested := 0
	for _, p := range presets {
		if !p.OAuthApp {
			continue
		}
		tested++
		t.Run(p.Name, func(t *testing.T) {
			data := describedfake.Servable(t, mustDescription(t, p.Name))
			spec, err := build(ctx, p, data)
			if err != nil {
				t.Fatal(err)
			}
			authEP, tokenEP := mustURL(t, spec.OAuth.AuthURL), mustURL(t, spec.OAuth.TokenURL)
			clientID, secret := p.Name+"-app.example.com", "secret-of-"+p.Name
			as := oauthtest.New(t, oauthtest.Options{Style: oauthtest.GitHub, ClientID: clientID, ClientSecret: secret, RedirectURI: redirect,
				AuthPath: authEP.Path, TokenPath: tokenEP.Path})

			doc, err := openapi.Load(ctx, data)
			if err != nil {
				t.Fatal(err)
			}
			base := mustURL(t, spec.BaseURL)
			api := describedfake.New(t, doc, base.Path, nil)
			reg := providers.NewRegistry()
			if err := reg.Register(spec); err != nil {
				t.Fatal(err)
			}
			if err := reg.SetBaseURL(spec.Name, api.URL+base.Path); err != nil {
				t.Fatal(err)
			}
			transports := &providers.Transports{}
			svc := connections.NewService(connections.NewStore(db, kr), reg, transports, writer)
			// The environment moves only the endpoints' host to the test's server; the
			// app itself is the one the operator sets in the UI.
			svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: redirect,
				Apps: map[string]connections.OAuthApp{spec.Name: {AuthURL: as.AuthURL(), TokenURL: as.TokenURL()}}})
			if _, err := svc.Authorize(ctx, member, connections.AuthorizeInput{Provider: spec.Name}); switchboard.CodeOf(err) != switchboard.CodeInvalid ||
				!strings.Contains(err.Error(), "SWITCHBOARD_OAUTH_"+strings.ToUpper(spec.Name)+"_CLIENT_ID") {
				t.Fatalf("connecting with no app: %v; want an error naming SWITCHBOARD_OAUTH_%s_CLIENT_ID", err, strings.ToUpper(spec.Name))
			}
			if _, err := svc.SetDeploymentOAuthApp(ctx, operator, connections.OAuthAppInput{Provider: spec.Name, ClientID: clientID, ClientSecret: secret}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = svc.DeleteDeploymentOAuthApp(context.Background(), operator, spec.Name) })

			start, err := svc.Authorize(ctx, member, connections.AuthorizeInput{Provider: spec.Name})
			if err != nil {
				t.Fatal(err)
			}
			au := mustURL(t, start.URL)
			q := au.Query()
			var want []string
			for _, tl := range p.Tools {
				for _, s := range tl.Scopes {
					if !slices.Contains(want, s) {
						want = append(want, s)
					}
				}
			}
			if p.OAuth != nil {
				for _, s := range p.OAuth.Scopes {
					if !slices.Contains(want, s) {
						want = append(want, s)
					}
				}
			}
			if len(want) == 0 { // the preset names none: the description's scheme's, all of them
				want = slices.Clone(spec.OAuth.Scopes)
			}
			slices.Sort(want)
			got := strings.Fields(q.Get("scope"))
			slices.Sort(got)
			if au.Path != authEP.Path || q.Get("client_id") != clientID || q.Get("redirect_uri") != redirect || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || !slices.Equal(got, want) {
				t.Fatalf("authorization URL %s: want the preset's path %s, client %s, PKCE and the scopes %v", start.URL, authEP.Path, clientID, want)
			}

			code, state := consent(t, start.URL, as.URL)
			conn, err := svc.Callback(ctx, connections.CallbackInput{State: state, Code: code, Browser: start.CookieValue, Principal: &member})
			if err != nil {
				t.Fatal(err)
			}
			if as.Exchanges() != 1 {
				t.Errorf("%d code exchanges, want 1", as.Exchanges())
			}
			for _, r := range as.Requests() {
				if r.Path == tokenEP.Path && r.Form.Get("grant_type") == "authorization_code" && (r.Form.Get("code_verifier") == "" || r.Form.Get("client_id") != clientID) {
					t.Errorf("the token request lacks the PKCE verifier or the client: %v", r.Form)
				}
			}
			if conn.Provider != spec.Name || conn.AuthKind != providers.AuthOAuth2 || conn.Status != connections.StatusActive || conn.OwnerUserID != member.UserID || conn.AccountLabel != p.Title {
				t.Errorf("the connection: %+v", conn)
			}
			if gotScopes := slices.Sorted(slices.Values(strings.Fields(conn.Scopes))); len(want) > 0 && !slices.Equal(gotScopes, want) {
				t.Errorf("the connection's scopes %v, want %v", gotScopes, want)
			}
			_, creds, err := svc.Open(ctx, member.TenantID, conn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !as.TokenValid(creds.AccessToken) || creds.ClientID != clientID {
				t.Fatalf("the connection holds a token the server did not issue to %s", clientID)
			}

			rtr := router.New(router.Options{Registry: reg, Connections: svc, Audit: writer, Transports: transports, ArgsKey: []byte("test")})
			svc.Subscribe(rtr.Forget)
			tool := toolOf(t, reg, spec.Name+"_"+p.Tools[0].Name)
			generated, _ := arguments(t, tool, doc, p.Tools[0].Operation)
			args, err := json.Marshal(generated)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rtr.Execute(ctx, member, router.Request{Tool: tool.Name, ConnectionID: conn.ID, Args: args}); err != nil {
				t.Fatalf("%s(%s): %v", tool.Name, args, err)
			}
			last := api.Last(t)
			if last.Header.Get("Authorization") != "Bearer "+creds.AccessToken {
				t.Errorf("%s reached the API without the connection's token", tool.Name)
			}
			if m := api.Matched(); len(m) != 1 || m[0] != p.Tools[0].Operation {
				t.Errorf("%s ran %v, want %s", tool.Name, m, p.Tools[0].Operation)
			}
			api.Check(t)
		})
	}
	if tested < 8 {
		t.Errorf("%d catalog APIs connect with OAuth, want at least 8 (Google's four, Microsoft Graph, …)", tested)
	}
}

// consent plays the person at the authorization server: opens the consent page of the
// authorization URL, allows, and returns the code and state the server redirects back
// with.
func consent(t *testing.T, authURL, server string) (code, state string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the consent page answered %d", resp.StatusCode)
	}
	resp, err = c.PostForm(server+"/consent", url.Values{"request": {mustURL(t, authURL).RawQuery}, "user": {"ada"}, "decision": {"allow"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	back, err := resp.Location()
	if err != nil {
		t.Fatalf("the consent answered %d without a redirect: %v", resp.StatusCode, err)
	}
	return back.Query().Get("code"), back.Query().Get("state")
}

func toolOf(t *testing.T, reg *providers.Registry, name string) *providers.Tool {
	t.Helper()
	for _, tl := range reg.Tools(strings.SplitN(name, "_", 2)[0]) {
		if tl.Name == name {
			return tl
		}
	}
	for _, spec := range reg.Providers() {
		for _, tl := range reg.Tools(spec.Name) {
			if tl.Name == name {
				return tl
			}
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustDescription(t *testing.T, name string) []byte {
	t.Helper()
	data, err := Description(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
