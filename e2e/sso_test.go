package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/oauthtest"
)

// TestSingleSignOn signs a person in to a live `switchboard serve` with an OpenID
// provider the test runs (reached through the hub's SSRF guard, which the deployment
// lets reach loopback): the owner sets single sign-on through the API; the provider
// asserting the owner's email opens nothing until the owner approves the link that
// refused sign-in left; then passwords go off; the workspace's sign-in page shows only
// the button; the person of an allowed domain signs in, joins as a member and lands
// where they were going, signed in; a password and the owner's invitation link are
// refused; the sign-in is audited.
func TestSingleSignOn(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	addr := freeAddr(t)
	base := "http://" + addr
	op := oauthtest.NewOIDC(t, oauthtest.OIDCOptions{ClientID: "switchboard", ClientSecret: "idp-secret-0123456789", RedirectURI: base + "/signin/sso/callback"})
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_ADDR": addr, "SWITCHBOARD_REMOTE_MCP_ALLOW_PRIVATE": "true"})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	settings := map[string]any{"issuer": op.Issuer(), "client_id": "switchboard",
		"client_secret": "idp-secret-0123456789", "allowed_domains": []string{"example.com"}, "local_passwords_off": false}
	status, body := api.Do(t, http.MethodPut, "/api/sso", settings)
	if status != http.StatusOK || strings.Contains(string(body), "idp-secret") {
		t.Fatalf("PUT /api/sso: %d %s", status, body)
	}

	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		res, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		page, _ := io.ReadAll(res.Body)
		return res, string(page)
	}

	// The provider asserts the owner's email: no session, a link request instead,
	// which the owner approves; then passwords may go.
	op.SignIn(&oauthtest.Person{Subject: "u-owner", Email: "admin@localhost", EmailVerified: true})
	res, page := get(base + "/signin/sso?workspace=default")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start as the owner: %d %s", res.StatusCode, page)
	}
	res, _ = get(res.Header.Get("Location"))
	res, page = get(res.Header.Get("Location"))
	if res.StatusCode != http.StatusForbidden || cookieOf(res, "switchboard_session") != "" || !strings.Contains(page, "Link single sign-on") {
		t.Fatalf("single sign-on as the unlinked owner: %d %s", res.StatusCode, page)
	}
	var links struct {
		Links []struct {
			ID      string `json:"id"`
			Email   string `json:"email"`
			Pending bool   `json:"pending"`
		} `json:"links"`
	}
	status, body = api.Do(t, http.MethodGet, "/api/sso/links", nil)
	if err := json.Unmarshal(body, &links); status != http.StatusOK || err != nil || len(links.Links) != 1 || !links.Links[0].Pending || links.Links[0].Email != "admin@localhost" {
		t.Fatalf("GET /api/sso/links: %d %s", status, body)
	}
	if status, body = api.Do(t, http.MethodPost, "/api/sso/links/"+links.Links[0].ID+"/approve", nil); status != http.StatusOK {
		t.Fatalf("approve the owner's link: %d %s", status, body)
	}
	settings["local_passwords_off"] = true
	if status, body = api.Do(t, http.MethodPut, "/api/sso", settings); status != http.StatusOK {
		t.Fatalf("PUT /api/sso with passwords off: %d %s", status, body)
	}

	res, page = get(base + "/signin?workspace=default")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="sso-start"`) || strings.Contains(page, `name="password"`) {
		t.Fatalf("the sign-in page of a workspace with passwords off: %d\n%s", res.StatusCode, page)
	}
	op.SignIn(&oauthtest.Person{Subject: "u-cy", Email: "cy@example.com", EmailVerified: true})
	res, page = get(base + "/signin/sso?workspace=default&next=%2Fsettings")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), op.URL+"/authorize?") {
		t.Fatalf("start: %d %s %s", res.StatusCode, res.Header.Get("Location"), page)
	}
	res, page = get(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound {
		t.Fatalf("the provider: %d %s", res.StatusCode, page)
	}
	res, page = get(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/settings" {
		t.Fatalf("the callback: %d %s %s", res.StatusCode, res.Header.Get("Location"), page)
	}
	res, page = get(base + "/settings")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Sign out") {
		t.Errorf("/settings after single sign-on: %d, want the page signed in\n%s", res.StatusCode, page)
	}
	status, body = api.Do(t, http.MethodGet, "/api/users", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"cy@example.com"`) || !strings.Contains(string(body), `"member"`) {
		t.Errorf("users after the first sign-in: %d %s", status, body)
	}

	// Passwords are off: a password and the owner's one-time link are refused.
	otherJar, _ := cookiejar.New(nil)
	other := &http.Client{Jar: otherJar, CheckRedirect: b.CheckRedirect}
	res, err := other.Get(base + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	form := url.Values{"tenant": {"default"}, "email": {"admin@localhost"}, "password": {"whatever password"}}
	for _, c := range other.Jar.Cookies(mustParse(t, base)) {
		if c.Name == "switchboard_form" {
			form.Set("csrf", c.Value)
		}
	}
	res, err = other.PostForm(base+"/signin", form)
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(res)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "single sign-on only") {
		t.Errorf("a password with passwords off: %d\n%s", res.StatusCode, page)
	}
	res, err = other.Get(srv.AdminLink)
	if err != nil {
		t.Fatal(err)
	}
	invite := readAll(res)
	linkForm := url.Values{"password": {"a long enough password"}, "confirm": {"a long enough password"}}
	for k, v := range hidden(invite) {
		linkForm.Set(k, v)
	}
	res, err = other.PostForm(srv.AdminLink, linkForm)
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(res)
	if res.StatusCode != http.StatusForbidden || cookieOf(res, "switchboard_session") != "" {
		t.Errorf("the owner's invitation link with passwords off: %d\n%s", res.StatusCode, page)
	}

	status, body = api.Do(t, http.MethodGet, "/api/audit?kind=sso_sign_in", nil)
	if status != http.StatusOK || !strings.Contains(string(body), "joined as member by domain") {
		t.Errorf("the audit log's sso_sign_in events: %d %s", status, body)
	}
}

func readAll(res *http.Response) string {
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func cookieOf(res *http.Response, name string) string {
	for _, c := range res.Cookies() {
		if c.Name == name && c.MaxAge >= 0 {
			return c.Value
		}
	}
	return ""
}
