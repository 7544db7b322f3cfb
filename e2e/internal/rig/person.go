package rig

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"testing"
)

// Person is a browser that signed in to the UI: it keeps cookies and follows no
// redirects.
type Person struct {
	t      *testing.T
	Client *http.Client
}

// hiddenField is one hidden input of a form.
var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// PersonPassword is the password SignedInPerson sets.
const PersonPassword = "a long enough password"

// SignedInPerson sets the admin's password with the one-time link serve printed,
// which signs them in.
func SignedInPerson(t *testing.T, link string) *Person {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	p := &Person{t: t, Client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	page := p.Get(link)
	form := url.Values{"password": {PersonPassword}, "confirm": {PersonPassword}}
	for k, v := range Hidden(page) {
		form.Set(k, v)
	}
	res, err := p.Client.PostForm(link, form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("set the admin's password: %d", res.StatusCode)
	}
	return p
}

// Get returns the page at u, failing the test unless it answers 200.
func (p *Person) Get(u string) string {
	p.t.Helper()
	res, err := p.Client.Get(u)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		p.t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return string(b)
}

// Allow opens the consent page at an authorization URL, allows the client, and
// returns where the answer sends the browser.
func (p *Person) Allow(authURL string) string {
	p.t.Helper()
	page := p.Get(authURL)
	form := url.Values{"decision": {"allow"}}
	for k, v := range Hidden(page) {
		form.Set(k, v)
	}
	u := MustParse(p.t, authURL)
	res, err := p.Client.PostForm(u.Scheme+"://"+u.Host+u.Path, form)
	if err != nil {
		p.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("allow on the consent page: %d", res.StatusCode)
	}
	return res.Header.Get("Location")
}

// Hidden returns a page's hidden form fields.
func Hidden(page string) map[string]string {
	out := map[string]string{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	return out
}

// MustParse parses s as a URL or fails the test.
func MustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// MustJSON decodes body into v or fails the test.
func MustJSON(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", RedactKey(string(body)), err)
	}
}
