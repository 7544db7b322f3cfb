package main

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/gmailtest"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testport"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// browser is a person's browser: a cookie jar, following redirects.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return browser{t: t, c: &http.Client{Jar: jar}}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// The browser's methods run in the client's elicitation handler too, off the test's
// goroutine: they report failures with Errorf, never Fatal.

// get fetches u, following redirects, and returns the last answer's status, URL and body.
func (b browser) get(u string) (int, *url.URL, string) {
	b.t.Helper()
	res, err := b.c.Get(u)
	if err != nil {
		b.t.Errorf("GET %s: %v", u, err)
		return 0, &url.URL{}, ""
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Request.URL, string(body)
}

func (b browser) post(u string, form url.Values) (int, *url.URL, string) {
	b.t.Helper()
	res, err := b.c.PostForm(u, form)
	if err != nil {
		b.t.Errorf("POST %s: %v", u, err)
		return 0, &url.URL{}, ""
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Request.URL, string(body)
}

// setPassword follows a password (invitation) link and sets the password, which signs
// the browser in.
func (b browser) setPassword(link string) {
	b.t.Helper()
	_, _, page := b.get(link)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no form at %s: %s", link, page)
	}
	pw := "correct horse battery staple"
	if code, _, body := b.post(link, url.Values{"csrf": {m[1]}, "password": {pw}, "confirm": {pw}}); code != http.StatusOK {
		b.t.Fatalf("set password: %d %s", code, body)
	}
}

// connect opens a connect link as the person would: signed in, it goes on to the
// provider's consent page, where the person allows what is asked; the provider sends
// the browser back to the hub, which answers with its page. It returns the scope the
// provider was asked for and the hub's last page.
func (b browser) connect(link string) (scope url.Values, status int, page string) {
	b.t.Helper()
	code, at, body := b.get(link)
	m := regexp.MustCompile(`name="request" value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		b.t.Errorf("the connect link led to %s: %d %s", at, code, body)
		return nil, 0, ""
	}
	request := html.UnescapeString(m[1])
	q, err := url.ParseQuery(request)
	if err != nil {
		b.t.Errorf("the consent page's request %q: %v", request, err)
		return nil, 0, ""
	}
	consent := at.Scheme + "://" + at.Host + "/consent"
	status, _, page = b.post(consent, url.Values{"request": {request}, "user": {"admin@example.test"}, "decision": {"allow"}})
	return q, status, page
}

// TestConnectFromConversation: with the catalog setting "all", an agent (the official
// Go SDK client, on both protocol eras) calls gmail_send_message with no Gmail account
// connected; the call gives the person a connect link in a URL-mode elicitation, which
// another person of the tenant cannot use; the person signs in, allows access at the
// provider, and the same call then runs against Gmail with the new connection. The same
// for a scope the connection lacks (only that scope is asked) and for a connection
// Gmail stopped accepting (reconnected in place). A client without URL elicitation gets
// the link in a tool error.
func TestConnectFromConversation(t *testing.T) {
	t.Parallel()
	gmail, n, out := serveWithGmail(t)
	admin, person := gmailTenant(t, n, out, `{"confirm":"never","tool_mode":"all","catalog":"all"}`)
	other := otherPerson(t, n, admin)

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			var mu sync.Mutex
			var asked []*sdk.ElicitParams
			var completed []string
			// What the person does with each link: the other person tries it first, then
			// the person connects; scopes[i] is what the provider was asked the i-th time.
			var scopes []url.Values
			client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, &sdk.ClientOptions{
				Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params)
					mu.Unlock()
					if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, n.base+"/connect/") {
						return &sdk.ElicitResult{Action: "decline"}, nil
					}
					if code, _, page := other.get(req.Params.URL); code != http.StatusForbidden || !strings.Contains(page, "another person") {
						t.Errorf("another person opened the link: %d %s", code, page)
					}
					q, status, page := person.connect(req.Params.URL)
					mu.Lock()
					scopes = append(scopes, q)
					mu.Unlock()
					if status != http.StatusOK || !strings.Contains(page, "connected") {
						t.Errorf("the provider's redirect back: %d %s", status, page)
					}
					// A link works once.
					if code, _, page := person.get(req.Params.URL); code != http.StatusConflict || !strings.Contains(page, "used already") {
						t.Errorf("the link opened again: %d %s", code, page)
					}
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
				ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
					mu.Lock()
					completed = append(completed, req.Params.ElicitationID)
					mu.Unlock()
				},
			})
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: n.base + "/mcp/default", HTTPClient: &http.Client{Transport: bearerTransport{key: admin}}, DisableStandaloneSSE: true,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })

			// Nothing connected: the tool is listed, saying so (once the hub heard of
			// the last era's connection going).
			testwait.Until(t, "gmail_send_message listed as not connected", func() bool {
				tools, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range tools.Tools {
					if tool.Name == "gmail_send_message" {
						return strings.HasPrefix(tool.Description, "[NOT CONNECTED]")
					}
				}
				return false
			})
			call := func(tool string, args map[string]any) *sdk.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Fatalf("call %s: %v", tool, err)
				}
				return res
			}
			text := func(res *sdk.CallToolResult) string {
				var b strings.Builder
				for _, c := range res.Content {
					if tc, ok := c.(*sdk.TextContent); ok {
						b.WriteString(tc.Text)
					}
				}
				return b.String()
			}
			check := func(step string, nAsked int, wantScope string) {
				t.Helper()
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != nAsked || len(scopes) != nAsked {
					t.Fatalf("%s: %d links asked, %d followed; want %d", step, len(asked), len(scopes), nAsked)
				}
				last := asked[nAsked-1]
				if last.ElicitationID == "" || !strings.Contains(last.Message, "Gmail") {
					t.Errorf("%s: elicitation %+v", step, last)
				}
				if got := scopes[nAsked-1].Get("scope"); got != wantScope {
					t.Errorf("%s: the provider was asked for scope %q, want %q", step, got, wantScope)
				}
				if version == "2025-11-25" && (len(completed) != nAsked || completed[nAsked-1] != last.ElicitationID) {
					t.Errorf("%s: elicitation/complete for %q, want %q last", step, completed, last.ElicitationID)
				}
			}

			// 1. Nothing connected: the call asks, the person connects, the call runs.
			raw := "VG86IGJvYkBleGFtcGxlLnRlc3QKU3ViamVjdDogSGkKCkhlbGxv" // base64url of a short RFC 2822 message
			res := call("gmail_send_message", map[string]any{"userId": "me", "body": map[string]any{"raw": raw}})
			if res.IsError || !strings.Contains(text(res), `"labelIds":["SENT"]`) {
				t.Fatalf("send with nothing connected: %s", text(res))
			}
			check("nothing connected", 1, gmailtest.ScopeSend)
			gmail.Mu.Lock()
			if len(gmail.Sent) == 0 || gmail.Sent[len(gmail.Sent)-1] != raw {
				t.Errorf("Gmail received %q, want %q last", gmail.Sent, raw)
			}
			gmail.Mu.Unlock()
			conns := gmailConnections(t, n, admin)
			if len(conns) != 1 || strings.Join(conns[0].Scopes, " ") != gmailtest.ScopeSend {
				t.Fatalf("gmail connections after the first link: %+v", conns)
			}

			// 2. A scope the connection lacks: only that scope is asked, and the
			// connection keeps the one it had.
			res = call("gmail_get_profile", map[string]any{"userId": "me"})
			if res.IsError || !strings.Contains(text(res), "admin@example.test") {
				t.Fatalf("profile with a missing scope: %s", text(res))
			}
			check("missing scope", 2, gmailtest.ScopeReadonly)
			mu.Lock()
			if scopes[1].Get("include_granted_scopes") != "true" {
				t.Errorf("the incremental authorization did not keep the granted scopes: %v", scopes[1])
			}
			mu.Unlock()
			after := gmailConnections(t, n, admin)
			if len(after) != 1 || after[0].ID != conns[0].ID || !slices.Contains(after[0].Scopes, gmailtest.ScopeSend) || !slices.Contains(after[0].Scopes, gmailtest.ScopeReadonly) {
				t.Fatalf("gmail connections after the added scope: %+v", after)
			}

			// 3. Gmail stops accepting the token: the call asks to reconnect, and runs.
			gmail.Mu.Lock()
			gmail.Revoked[gmail.Tokens[len(gmail.Tokens)-1]] = true
			gmail.Mu.Unlock()
			res = call("gmail_send_message", map[string]any{"userId": "me", "body": map[string]any{"raw": raw + "Cg"}})
			if res.IsError || !strings.Contains(text(res), `"labelIds":["SENT"]`) {
				t.Fatalf("send after the token was refused: %s", text(res))
			}
			mu.Lock()
			if len(scopes) != 3 {
				t.Fatalf("reconnect: %d links followed, want 3", len(scopes))
			}
			mu.Unlock()
			gmail.Mu.Lock()
			if gmail.Sent[len(gmail.Sent)-1] != raw+"Cg" {
				t.Errorf("Gmail received %q last, want %q", gmail.Sent[len(gmail.Sent)-1], raw+"Cg")
			}
			gmail.Mu.Unlock()
			if again := gmailConnections(t, n, admin); len(again) != 1 || again[0].ID != conns[0].ID || again[0].Status != "active" {
				t.Fatalf("gmail connections after the reconnection: %+v", again)
			}

			// A client that cannot open a URL gets the link in a tool error.
			plain := sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "1"}, nil)
			ps, err := plain.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: n.base + "/mcp/default", HTTPClient: &http.Client{Transport: bearerTransport{key: admin}}, DisableStandaloneSSE: true,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ps.Close() })
			gmail.Mu.Lock()
			gmail.Revoked[gmail.Tokens[len(gmail.Tokens)-1]] = true
			gmail.Mu.Unlock()
			res, err = ps.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_send_message", Arguments: map[string]any{"userId": "me", "body": map[string]any{"raw": raw}}})
			if err != nil || !res.IsError || !strings.Contains(text(res), n.base+"/connect/") {
				t.Fatalf("a client without URL elicitation: %v %+v", err, res)
			}

			// The next era starts with nothing connected again.
			if code, body := n.raw(t, http.MethodDelete, "/api/connections/"+conns[0].ID, admin, ""); code != http.StatusNoContent && code != http.StatusOK {
				t.Fatalf("delete the connection: %d %s", code, body)
			}
		})
	}
}

// startGmail starts a fake Gmail whose authorization server sends the browser back to
// public's OAuth callback, and returns it with a folder holding its description (for
// SWITCHBOARD_OPENAPI_DIR).
// serveWithGmail starts one serve process on SQLite, with the fake Gmail's description
// imported and Gmail's OAuth pointed at the fake's authorization server.
func serveWithGmail(t *testing.T) (*gmailtest.Gmail, node, []string) {
	t.Helper()
	addr := testport.Addr(t)
	public := "http://" + addr
	gmail, dir := startGmail(t, public)
	e := env(map[string]string{"SWITCHBOARD_ADDR": addr, "SWITCHBOARD_PUBLIC_URL": public, "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"),
		"SWITCHBOARD_OPENAPI_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error"})
	out, _ := startServe(t, e, 6)
	return gmail, node{base: public}, out
}

func startGmail(t *testing.T, public string) (*gmailtest.Gmail, string) {
	t.Helper()
	oa := oauthtest.New(t, oauthtest.Options{Style: oauthtest.GitHub, ClientID: "gmail-client", ClientSecret: "gmail-secret", RedirectURI: public + "/oauth/callback"})
	gmail := &gmailtest.Gmail{OAuth: oa, Revoked: map[string]bool{}}
	// One origin for Gmail's API and its authorization server, as the description says.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/gmail/") {
			gmail.ServeHTTP(w, r)
			return
		}
		oa.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gmail.json"), []byte(gmailtest.Description(up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	return gmail, dir
}

// gmailTenant sets up the tenant of a serve that printed out: the tenant's own Gmail
// OAuth app and the MCP settings given; it returns the admin's key and the admin's
// browser, signed in.
func gmailTenant(t *testing.T, n node, out []string, settings string) (string, browser) {
	t.Helper()
	var admin, passwordLink string
	for _, line := range out {
		if k, ok := strings.CutPrefix(line, "Admin API key (shown once, store it now): "); ok {
			admin = k
		}
		if _, l, ok := strings.Cut(line, "Set the admin's UI password (admin@localhost, one use, 24 h): "); ok {
			passwordLink = l
		}
	}
	if admin == "" || passwordLink == "" {
		t.Fatalf("serve printed no admin key or password link: %q", out)
	}
	if code, body := n.raw(t, http.MethodPut, "/api/oauth-apps/gmail", admin, `{"client_id":"gmail-client","client_secret":"gmail-secret"}`); code != http.StatusOK {
		t.Fatalf("put the OAuth app: %d %s", code, body)
	}
	if code, body := n.raw(t, http.MethodPut, "/api/mcp-settings", admin, settings); code != http.StatusOK {
		t.Fatalf("put the MCP settings: %d %s", code, body)
	}
	person := newBrowser(t)
	person.setPassword(passwordLink)
	return admin, person
}

// gmailConnection is a Gmail connection as the REST API lists it.
type gmailConnection struct {
	ID       string   `json:"id"`
	Provider string   `json:"provider"`
	Status   string   `json:"status"`
	Scopes   []string `json:"scopes"`
}

// gmailConnections lists the tenant's Gmail connections.
func gmailConnections(t *testing.T, n node, admin string) []gmailConnection {
	t.Helper()
	var list struct {
		Connections []gmailConnection `json:"connections"`
	}
	if code := n.api(t, http.MethodGet, "/api/connections", admin, "", &list); code != http.StatusOK {
		t.Fatalf("list connections: %d", code)
	}
	var out []gmailConnection
	for _, c := range list.Connections {
		if c.Provider == "gmail" {
			out = append(out, c)
		}
	}
	return out
}

// otherPerson invites another person (a member) to the admin's tenant and returns
// their browser, signed in.
func otherPerson(t *testing.T, n node, admin string) browser {
	t.Helper()
	var inv struct {
		URL string `json:"url"`
	}
	if code := n.api(t, http.MethodPost, "/api/invitations", admin, `{"email":"bob@example.test","role":"member"}`, &inv); code != http.StatusCreated || inv.URL == "" {
		t.Fatalf("invite: %d %+v", code, inv)
	}
	other := newBrowser(t)
	other.setPassword(inv.URL)
	return other
}

// bearerTransport adds an API key to every request of the Go SDK's client.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}
