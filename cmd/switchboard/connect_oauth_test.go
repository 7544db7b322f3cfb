package main

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-hub/switchboard/internal/gmailtest"
)

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// allow answers the hub's consent page at an authorization URL as the signed-in person
// would, allowing the client, and returns where the answer sends the browser (the
// client's redirect URI, which the browser does not open).
func (b browser) allow(authURL string) *url.URL {
	b.t.Helper()
	stay := &http.Client{Jar: b.c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, at, page := b.get(authURL)
	if code != http.StatusOK || !strings.Contains(page, `value="allow"`) {
		b.t.Errorf("the consent page at %s: %d %s", at, code, page)
		return &url.URL{}
	}
	form := url.Values{"decision": {"allow"}}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	res, err := stay.PostForm(at.Scheme+"://"+at.Host+at.Path, form)
	if err != nil {
		b.t.Errorf("allow: %v", err)
		return &url.URL{}
	}
	res.Body.Close()
	back, err := res.Location()
	if res.StatusCode != http.StatusSeeOther || err != nil {
		b.t.Errorf("allow on the consent page: %d %v", res.StatusCode, err)
		return &url.URL{}
	}
	return back
}

// TestConnectFromOAuthClient: an MCP client signed in through the hub's own
// authorization server (the official Go SDK client's authorization code handler:
// discovery from the 401, dynamic client registration, PKCE, a person allowing it on
// the consent page, the token) calls gmail_send_message with no Gmail account
// connected, under the catalog setting "all". The call asks in a URL-mode elicitation;
// the link is bound to the person who allowed the client, who follows it and connects,
// and the call then runs on the new connection. At the workspace's URL (both protocol
// eras) a member allows the client and the tenant's admin is refused the link; at an
// agent's URL the admin who created the agent allows it and the member is refused.
func TestConnectFromOAuthClient(t *testing.T) {
	t.Parallel()
	gmail, n, out := serveWithGmail(t)
	admin, adminBrowser := gmailTenant(t, n, out, `{"confirm":"never","tool_mode":"all","catalog":"all"}`)
	member := otherPerson(t, n, admin)

	// sends signs a new client in at endpoint, allowed by granter, and has it send a
	// message with nothing connected: refused is refused the link, granter connects.
	sends := func(t *testing.T, version, endpoint string, granter, refused browser) {
		ctx := context.Background()
		var mu sync.Mutex
		var authorized []string
		var scopes []url.Values
		redirect := "http://127.0.0.1:1/callback"
		handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "Chat app", RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
			}},
			RedirectURL: redirect,
			AuthorizationCodeFetcher: func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				mu.Lock()
				authorized = append(authorized, args.URL)
				mu.Unlock()
				q := granter.allow(args.URL).Query()
				return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		client := sdk.NewClient(&sdk.Implementation{Name: "chat", Version: "1"}, &sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, n.base+"/connect/") {
					t.Errorf("elicitation %+v", req.Params)
					return &sdk.ElicitResult{Action: "decline"}, nil
				}
				if code, _, page := refused.get(req.Params.URL); code != http.StatusForbidden || !strings.Contains(page, "another person") {
					t.Errorf("a person who did not allow the client opened its link: %d %s", code, page)
				}
				q, status, page := granter.connect(req.Params.URL)
				if status != http.StatusOK || !strings.Contains(page, "connected") {
					t.Errorf("the provider's redirect back: %d %s", status, page)
				}
				mu.Lock()
				scopes = append(scopes, q)
				mu.Unlock()
				return &sdk.ElicitResult{Action: "accept"}, nil
			},
		})
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint: endpoint, OAuthHandler: handler, DisableStandaloneSSE: true,
		}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect with OAuth: %v", err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		mu.Lock()
		if len(authorized) != 1 || !strings.Contains(authorized[0], "resource="+url.QueryEscape(endpoint)) {
			t.Errorf("the client was authorized at %q, want once for %s", authorized, endpoint)
		}
		mu.Unlock()

		raw := "VG86IGJvYkBleGFtcGxlLnRlc3QKU3ViamVjdDogSGkKCkhlbGxv"
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_send_message", Arguments: map[string]any{"userId": "me", "body": map[string]any{"raw": raw}}})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		if res.IsError || !strings.Contains(toolText(res), `"labelIds":["SENT"]`) {
			t.Fatalf("send from the OAuth client with nothing connected: %s", toolText(res))
		}
		mu.Lock()
		if len(scopes) != 1 || scopes[0].Get("scope") != gmailtest.ScopeSend {
			t.Errorf("links followed: %v, want one asking for %s", scopes, gmailtest.ScopeSend)
		}
		mu.Unlock()
		gmail.Mu.Lock()
		if len(gmail.Sent) == 0 || gmail.Sent[len(gmail.Sent)-1] != raw {
			t.Errorf("Gmail received %q, want %q last", gmail.Sent, raw)
		}
		gmail.Mu.Unlock()
		// The next call runs on the connection without asking.
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_send_message", Arguments: map[string]any{"userId": "me", "body": map[string]any{"raw": raw + "Cg"}}})
		if err != nil || res.IsError {
			t.Fatalf("the second call: %v %s", err, toolText(res))
		}
		mu.Lock()
		if len(scopes) != 1 {
			t.Errorf("the second call asked to connect again: %d links", len(scopes))
		}
		mu.Unlock()

		// The next client starts with nothing connected.
		conns := gmailConnections(t, n, admin)
		if len(conns) != 1 {
			t.Fatalf("gmail connections: %+v", conns)
		}
		if code, body := n.raw(t, http.MethodDelete, "/api/connections/"+conns[0].ID, admin, ""); code != http.StatusNoContent && code != http.StatusOK {
			t.Fatalf("delete the connection: %d %s", code, body)
		}
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			sends(t, version, n.base+"/mcp/default", member, adminBrowser)
		})
	}
	t.Run("agent", func(t *testing.T) {
		var agent struct {
			ID     string `json:"id"`
			MCPURL string `json:"mcp_url"`
		}
		if code := n.api(t, http.MethodPost, "/api/agents", admin, `{"name":"mailer","tools":[{"tool":"gmail_send_message"}]}`, &agent); code != http.StatusCreated || agent.MCPURL == "" {
			t.Fatalf("create the agent: %d %+v", code, agent)
		}
		sends(t, "2026-07-28", agent.MCPURL, adminBrowser, member)
	})
}
