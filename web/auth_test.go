package web_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/api"
)

var formTokenRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formToken loads a form page with the jar and returns its anti-forgery field.
func formToken(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	res, body := do(t, c, http.MethodGet, u, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", u, res.StatusCode)
	}
	m := formTokenRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("GET %s: no csrf field", u)
	}
	return m[1]
}

func newJar(t *testing.T) *cookiejar.Jar {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

func cookieNamed(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	tests := []struct {
		name       string
		form       url.Values
		badToken   bool
		wantStatus int
		wantBody   string
		wantLoc    string
		wantRetry  string // the Retry-After header
	}{
		{name: "no form token", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}}, badToken: true, wantStatus: http.StatusForbidden, wantBody: "The form expired"},
		{name: "missing email", form: url.Values{"tenant": {"acme"}, "password": {goodPassword}}, wantStatus: http.StatusBadRequest, wantBody: "Email is required."},
		{name: "missing password", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}}, wantStatus: http.StatusBadRequest, wantBody: "Password is required."},
		{name: "wrong password", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {"not the password"}}, wantStatus: http.StatusUnauthorized, wantBody: "The workspace, email or password is wrong."},
		{name: "throttled", form: url.Values{"tenant": {"acme"}, "email": {lockedEmail}, "password": {goodPassword}}, wantStatus: http.StatusTooManyRequests, wantRetry: "90",
			wantBody: "Too many failed sign-ins to this account; try again in 2 minutes, or ask an admin for a password link."},
		{name: "right password", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}, "next": {"/settings"}}, wantStatus: http.StatusSeeOther, wantLoc: "/settings"},
		{name: "next to another site", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}, "next": {"//evil.example/x"}}, wantStatus: http.StatusSeeOther, wantLoc: "/"},
		{name: "next with a tab before a second slash", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}, "next": {"/\t/evil.example/x"}}, wantStatus: http.StatusSeeOther, wantLoc: "/"},
		{name: "next with a backslash", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}, "next": {"/\\evil.example/x"}}, wantStatus: http.StatusSeeOther, wantLoc: "/"},
		{name: "next as a URL", form: url.Values{"tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}, "next": {"https://evil.example/"}}, wantStatus: http.StatusSeeOther, wantLoc: "/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := client(newJar(t))
			tok := formToken(t, c, srv.URL+"/signin?next=%2Fsettings")
			if !tc.badToken {
				tc.form.Set("csrf", tok)
			}
			res, body := do(t, c, http.MethodPost, srv.URL+"/signin", tc.form)
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", res.StatusCode, tc.wantStatus, body)
			}
			if !strings.Contains(body, tc.wantBody) {
				t.Errorf("body lacks %q", tc.wantBody)
			}
			if got := res.Header.Get("Retry-After"); got != tc.wantRetry {
				t.Errorf("Retry-After %q, want %q", got, tc.wantRetry)
			}
			if pw := tc.form.Get("password"); pw != "" && strings.Contains(body, pw) {
				t.Error("the answer holds the password")
			}
			ck := cookieNamed(res, api.SessionCookie)
			if tc.wantLoc == "" {
				if ck != nil {
					t.Errorf("a failed sign-in set a session cookie")
				}
				return
			}
			if diff := cmp.Diff(tc.wantLoc, res.Header.Get("Location")); diff != "" {
				t.Errorf("redirect (-want +got):\n%s", diff)
			}
			if ck == nil || !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.MaxAge != 12*3600 {
				t.Fatalf("session cookie %+v: want HttpOnly, Secure, SameSite=Lax, Path=/, 12 h", ck)
			}
			if _, err := acc.Session(t.Context(), ck.Value); err != nil {
				t.Errorf("the cookie is not a session: %v", err)
			}
		})
	}
	// The form keeps what was typed, except the password.
	c := client(newJar(t))
	tok := formToken(t, c, srv.URL+"/signin")
	_, body := do(t, c, http.MethodPost, srv.URL+"/signin", url.Values{"csrf": {tok}, "tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {"wrong wrong wrong"}})
	if !strings.Contains(body, `value="alice@acme.test"`) || strings.Contains(body, "wrong wrong wrong") {
		t.Error("a failed sign-in should keep the email and drop the password")
	}
}

func TestSignInCookieNotSecureOnHTTP(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "http://127.0.0.1:8080")
	c := client(newJar(t))
	tok := formToken(t, c, srv.URL+"/signin")
	res, _ := do(t, c, http.MethodPost, srv.URL+"/signin", url.Values{"csrf": {tok}, "tenant": {"acme"}, "email": {"alice@acme.test"}, "password": {goodPassword}})
	ck := cookieNamed(res, api.SessionCookie)
	if ck == nil || ck.Secure || !ck.HttpOnly {
		t.Fatalf("cookie %+v: on plain http the cookie is HttpOnly without Secure (a Secure cookie would never come back)", ck)
	}
}

func TestSignOut(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "http://127.0.0.1:8080")
	token := acc.session(t)
	tests := []struct {
		name       string
		csrf       string
		wantStatus int
		wantEnded  bool
	}{
		{name: "no token", wantStatus: http.StatusForbidden},
		{name: "another session's token", csrf: acc.CSRFToken("sbs_other"), wantStatus: http.StatusForbidden},
		{name: "the session's token", csrf: acc.CSRFToken(token), wantStatus: http.StatusSeeOther, wantEnded: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := do(t, client(nil), http.MethodPost, srv.URL+"/signout", url.Values{"csrf": {tc.csrf}}, sessionCookie(token))
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.wantStatus)
			}
			_, err := acc.Session(t.Context(), token)
			if ended := err != nil; ended != tc.wantEnded {
				t.Fatalf("session ended = %v, want %v", ended, tc.wantEnded)
			}
			if tc.wantEnded {
				if ck := cookieNamed(res, api.SessionCookie); ck == nil || ck.MaxAge >= 0 {
					t.Errorf("sign-out did not clear the cookie: %+v", ck)
				}
				if loc := res.Header.Get("Location"); loc != "/signin" {
					t.Errorf("redirect to %q, want /signin", loc)
				}
			}
		})
	}
}

func TestInvitationLink(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "http://127.0.0.1:8080")
	c := client(newJar(t))
	_, body := do(t, c, http.MethodGet, srv.URL+"/invite/sbi_unknown", nil)
	if !strings.Contains(body, "this link is not valid") || strings.Contains(body, `type="password"`) {
		t.Fatalf("an unknown link's page: %s", body)
	}
	tok := formToken(t, c, srv.URL+"/invite/"+linkToken)
	_, body = do(t, c, http.MethodGet, srv.URL+"/invite/"+linkToken, nil)
	if !strings.Contains(body, "bob@acme.test") || !strings.Contains(body, "Join Acme") {
		t.Fatalf("the invitation page does not say who and where: %s", body)
	}
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		wantBody   string
	}{
		{name: "no form token", form: url.Values{"password": {goodPassword}, "confirm": {goodPassword}}, wantStatus: http.StatusForbidden, wantBody: "The form expired"},
		{name: "passwords differ", form: url.Values{"csrf": {tok}, "password": {goodPassword}, "confirm": {goodPassword + "x"}}, wantStatus: http.StatusBadRequest, wantBody: "The two passwords differ"},
		{name: "too short", form: url.Values{"csrf": {tok}, "password": {"short"}, "confirm": {"short"}}, wantStatus: http.StatusBadRequest, wantBody: "The password must be at least 10 characters."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, body := do(t, c, http.MethodPost, srv.URL+"/invite/"+linkToken, tc.form)
			if res.StatusCode != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("status %d, want %d with %q; body %s", res.StatusCode, tc.wantStatus, tc.wantBody, body)
			}
			if strings.Contains(body, tc.form.Get("password")) {
				t.Error("the answer holds the password")
			}
			if len(acc.used) != 0 {
				t.Fatal("a refused form used the link")
			}
		})
	}
	res, _ := do(t, c, http.MethodPost, srv.URL+"/invite/"+linkToken, url.Values{"csrf": {tok}, "password": {goodPassword}, "confirm": {goodPassword}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("status %d location %q, want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	ck := cookieNamed(res, api.SessionCookie)
	if ck == nil {
		t.Fatal("no session cookie after the link was used")
	}
	if p, err := acc.Session(t.Context(), ck.Value); err != nil || p.UserID != "usr_bob" {
		t.Fatalf("session %+v %v, want bob's", p, err)
	}
	if diff := cmp.Diff(map[string]string{linkToken: goodPassword}, acc.used); diff != "" {
		t.Errorf("links used (-want +got):\n%s", diff)
	}
}
