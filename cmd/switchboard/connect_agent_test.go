package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/gmailtest"
)

// TestConnectFromAgentURL: an agent with the catalog setting "all" (the tenant keeps
// "connected") was given gmail_send_message and gmail_get_profile before any Gmail
// account was connected. At the agent's URL (the official Go SDK client, both protocol
// eras, the agent's key) the tools are listed as not connected; a call asks the person
// to connect in a URL-mode elicitation, runs on the new connection, and the agent is
// then bound to that connection, as the builder binds a tool offered on one account.
// A tool needing a scope the connection lacks asks for that scope only, and a
// connection Gmail stopped accepting is reconnected in place from the conversation.
// Each link is bound to the person who created the agent: another person of the
// tenant is refused. An agent that inherits the tenant's "connected" does not list
// the tools.
func TestConnectFromAgentURL(t *testing.T) {
	t.Parallel()
	gmail, n, out := serveWithGmail(t)
	admin, person := gmailTenant(t, n, out, `{"confirm":"never","tool_mode":"all"}`)
	other := otherPerson(t, n, admin)

	type agentTool struct {
		Tool         string `json:"tool"`
		ConnectionID string `json:"connection_id"`
	}
	type agentView struct {
		ID               string      `json:"id"`
		Catalog          string      `json:"catalog"`
		EffectiveCatalog string      `json:"effective_catalog"`
		Tools            []agentTool `json:"tools"`
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			// Two agents given the tools on no connection: one offers the whole catalog,
			// the other inherits the tenant's "connected".
			var all, inherits agentView
			tools := `[{"tool":"gmail_send_message"},{"tool":"gmail_get_profile"}]`
			if code := n.api(t, http.MethodPost, "/api/agents", admin, `{"name":"mailer `+version+`","catalog":"all","tools":`+tools+`}`, &all); code != http.StatusCreated ||
				all.EffectiveCatalog != "all" || len(all.Tools) != 2 || all.Tools[0].ConnectionID != "" {
				t.Fatalf("create the agent: %d %+v", code, all)
			}
			if code := n.api(t, http.MethodPost, "/api/agents", admin, `{"name":"inherits `+version+`","tools":`+tools+`}`, &inherits); code != http.StatusCreated || inherits.EffectiveCatalog != "connected" {
				t.Fatalf("create the inheriting agent: %d %+v", code, inherits)
			}
			// What the person does with each link: the other person tries it first and is
			// refused, then the person connects. scopes[i] is what the provider was asked
			// the i-th time, statuses[i] the Gmail connections' statuses when it was.
			var mu sync.Mutex
			var scopes []url.Values
			var statuses [][]string
			session := func(agent agentView, elicit bool) *sdk.ClientSession {
				t.Helper()
				var key struct {
					Key    string `json:"key"`
					MCPURL string `json:"mcp_url"`
				}
				if code := n.api(t, http.MethodPost, "/api/agents/"+agent.ID+"/keys", admin, `{"name":"chat"}`, &key); code != http.StatusCreated {
					t.Fatalf("agent key: %d", code)
				}
				opts := &sdk.ClientOptions{}
				if elicit {
					opts.Capabilities = &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}
					opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, n.base+"/connect/") {
							t.Errorf("elicitation %+v", req.Params)
							return &sdk.ElicitResult{Action: "decline"}, nil
						}
						var st []string
						for _, c := range gmailConnections(t, n, admin) {
							st = append(st, c.Status)
						}
						if code, _, page := other.get(req.Params.URL); code != http.StatusForbidden || !strings.Contains(page, "another person") {
							t.Errorf("another person opened the agent's link: %d %s", code, page)
						}
						q, status, page := person.connect(req.Params.URL)
						if status != http.StatusOK || !strings.Contains(page, "connected") {
							t.Errorf("the provider's redirect back: %d %s", status, page)
						}
						mu.Lock()
						scopes, statuses = append(scopes, q), append(statuses, st)
						mu.Unlock()
						return &sdk.ElicitResult{Action: "accept"}, nil
					}
				}
				cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, opts).Connect(ctx, &sdk.StreamableClientTransport{
					Endpoint: key.MCPURL, HTTPClient: &http.Client{Transport: bearerTransport{key: key.Key}}, DisableStandaloneSSE: true,
				}, &sdk.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatalf("connect to %s: %v", key.MCPURL, err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			// asked checks the links followed so far, and that the last asked the
			// provider for scope.
			asked := func(step string, links int, scope string) {
				t.Helper()
				mu.Lock()
				defer mu.Unlock()
				if len(scopes) != links {
					t.Fatalf("%s: %d links followed, want %d", step, len(scopes), links)
				}
				if got := scopes[links-1].Get("scope"); got != scope {
					t.Errorf("%s: the provider was asked for scope %q, want %q", step, got, scope)
				}
			}
			listed := func(cs *sdk.ClientSession) string {
				t.Helper()
				tools, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range tools.Tools {
					if tool.Name == "gmail_send_message" {
						return tool.Description
					}
				}
				return ""
			}
			if d := listed(session(inherits, false)); d != "" {
				t.Errorf("the agent inheriting the tenant's catalog lists gmail_send_message: %q", d)
			}
			cs := session(all, true)
			if d := listed(cs); !strings.HasPrefix(d, "[NOT CONNECTED]") {
				t.Fatalf("gmail_send_message at the agent's URL: %q, want it listed as not connected", d)
			}
			send := func(step, raw string) {
				t.Helper()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_send_message", Arguments: map[string]any{"userId": "me", "body": map[string]any{"raw": raw}}})
				if err != nil {
					t.Fatalf("%s: call: %v", step, err)
				}
				if res.IsError || !strings.Contains(toolText(res), `"labelIds":["SENT"]`) {
					t.Fatalf("%s: send at the agent's URL: %s", step, toolText(res))
				}
				gmail.Mu.Lock()
				last := ""
				if len(gmail.Sent) > 0 {
					last = gmail.Sent[len(gmail.Sent)-1]
				}
				gmail.Mu.Unlock()
				if last != raw {
					t.Errorf("%s: Gmail received %q last, want %q", step, last, raw)
				}
			}

			// 1. Nothing connected: the call asks, the person connects, the call runs.
			raw := "VG86IGJvYkBleGFtcGxlLnRlc3QKU3ViamVjdDogSGkKCkhlbGxv"
			send("nothing connected", raw)
			asked("nothing connected", 1, gmailtest.ScopeSend)

			// The agent is bound to the new connection, and a second call runs on it
			// without asking.
			conns := gmailConnections(t, n, admin)
			if len(conns) != 1 || strings.Join(conns[0].Scopes, " ") != gmailtest.ScopeSend {
				t.Fatalf("gmail connections after the first link: %+v", conns)
			}
			gmailConn := conns[0].ID
			var after agentView
			if code := n.api(t, http.MethodGet, "/api/agents/"+all.ID, admin, "", &after); code != http.StatusOK ||
				len(after.Tools) != 2 || after.Tools[0].ConnectionID != gmailConn || after.Tools[1].ConnectionID != gmailConn {
				t.Fatalf("the agent after the connection (gmail connection %q): %d %+v", gmailConn, code, after)
			}
			send("connected", raw+"Cg")
			asked("connected", 1, gmailtest.ScopeSend)
			if d := listed(cs); strings.HasPrefix(d, "[NOT CONNECTED]") || d == "" {
				t.Errorf("gmail_send_message after the connection: %q", d)
			}

			// 2. A scope the connection lacks: only that scope is asked, and the same
			// connection gains it.
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_get_profile", Arguments: map[string]any{"userId": "me"}})
			if err != nil || res.IsError || !strings.Contains(toolText(res), "admin@example.test") {
				t.Fatalf("profile with a missing scope: %v %s", err, toolText(res))
			}
			asked("missing scope", 2, gmailtest.ScopeReadonly)
			if conns := gmailConnections(t, n, admin); len(conns) != 1 || conns[0].ID != gmailConn ||
				!slices.Contains(conns[0].Scopes, gmailtest.ScopeSend) || !slices.Contains(conns[0].Scopes, gmailtest.ScopeReadonly) {
				t.Fatalf("gmail connections after the added scope: %+v", conns)
			}

			// 3. Gmail stops accepting the token: the connection needs reconnecting,
			// the call asks to reconnect it, and runs on the same connection, renewed.
			gmail.Mu.Lock()
			gmail.Revoked[gmail.Tokens[len(gmail.Tokens)-1]] = true
			gmail.Mu.Unlock()
			send("reconnect", raw+"Zz")
			asked("reconnect", 3, gmailtest.ScopeReadonly+" "+gmailtest.ScopeSend) // what the connection had
			mu.Lock()
			if got := statuses[2]; len(got) != 1 || got[0] != "needs_reconnect" {
				t.Errorf("the connection when the reconnect link was given: %q, want needs_reconnect", got)
			}
			mu.Unlock()
			if conns := gmailConnections(t, n, admin); len(conns) != 1 || conns[0].ID != gmailConn || conns[0].Status != "active" {
				t.Fatalf("gmail connections after the reconnection: %+v", conns)
			}
			if code := n.api(t, http.MethodGet, "/api/agents/"+all.ID, admin, "", &after); code != http.StatusOK || after.Tools[0].ConnectionID != gmailConn {
				t.Fatalf("the agent after the reconnection: %d %+v", code, after)
			}

			// The next era starts with nothing connected again.
			if code, body := n.raw(t, http.MethodDelete, "/api/connections/"+gmailConn, admin, ""); code != http.StatusNoContent && code != http.StatusOK {
				t.Fatalf("delete the connection: %d %s", code, body)
			}
		})
	}
}

// toolText joins the text content of a result of the Go SDK.
func toolText(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
