package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testport"
)

// TestConnectFromAgentURL: an agent with the catalog setting "all" (the tenant keeps
// "connected") was given gmail_send_message before any Gmail account was connected. At
// the agent's URL (the official Go SDK client, both protocol eras) the tool is listed
// as not connected; a call asks the person to connect in a URL-mode elicitation, runs
// on the new connection, and the agent is then bound to that connection, as the
// builder binds a tool offered on one account. An agent that inherits the tenant's
// "connected" does not list the tool.
func TestConnectFromAgentURL(t *testing.T) {
	t.Parallel()
	addr := testport.Addr(t)
	public := "http://" + addr
	gmail, dir := startGmail(t, public)
	e := env(map[string]string{"SWITCHBOARD_ADDR": addr, "SWITCHBOARD_PUBLIC_URL": public, "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"),
		"SWITCHBOARD_OPENAPI_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error"})
	out, _ := startServe(t, e, 6)
	n := node{base: public}
	admin, person := gmailTenant(t, n, out, `{"confirm":"never","tool_mode":"all"}`)

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
			// Two agents given the tool on no connection: one offers the whole catalog,
			// the other inherits the tenant's "connected".
			var all, inherits agentView
			if code := n.api(t, http.MethodPost, "/api/agents", admin, `{"name":"mailer `+version+`","catalog":"all","tools":[{"tool":"gmail_send_message"}]}`, &all); code != http.StatusCreated ||
				all.EffectiveCatalog != "all" || len(all.Tools) != 1 || all.Tools[0].ConnectionID != "" {
				t.Fatalf("create the agent: %d %+v", code, all)
			}
			if code := n.api(t, http.MethodPost, "/api/agents", admin, `{"name":"inherits `+version+`","tools":[{"tool":"gmail_send_message"}]}`, &inherits); code != http.StatusCreated || inherits.EffectiveCatalog != "connected" {
				t.Fatalf("create the inheriting agent: %d %+v", code, inherits)
			}
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
						if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, public+"/connect/") {
							t.Errorf("elicitation %+v", req.Params)
							return &sdk.ElicitResult{Action: "decline"}, nil
						}
						if _, status, page := person.connect(req.Params.URL); status != http.StatusOK || !strings.Contains(page, "connected") {
							t.Errorf("the provider's redirect back: %d %s", status, page)
						}
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

			raw := "VG86IGJvYkBleGFtcGxlLnRlc3QKU3ViamVjdDogSGkKCkhlbGxv"
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_send_message", Arguments: map[string]any{"userId": "me", "body": map[string]any{"raw": raw}}})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if res.IsError || !strings.Contains(toolText(res), `"labelIds":["SENT"]`) {
				t.Fatalf("send at the agent's URL with nothing connected: %s", toolText(res))
			}
			gmail.Mu.Lock()
			sent := len(gmail.Sent)
			last := ""
			if sent > 0 {
				last = gmail.Sent[sent-1]
			}
			gmail.Mu.Unlock()
			if last != raw {
				t.Errorf("Gmail received %q last, want %q", last, raw)
			}

			// The agent is bound to the new connection, and a second call runs on it
			// without asking.
			var conns struct {
				Connections []struct {
					ID       string `json:"id"`
					Provider string `json:"provider"`
				} `json:"connections"`
			}
			if code := n.api(t, http.MethodGet, "/api/connections", admin, "", &conns); code != http.StatusOK {
				t.Fatalf("list connections: %d", code)
			}
			var gmailConn string
			for _, c := range conns.Connections {
				if c.Provider == "gmail" {
					gmailConn = c.ID
				}
			}
			var after agentView
			if code := n.api(t, http.MethodGet, "/api/agents/"+all.ID, admin, "", &after); code != http.StatusOK || gmailConn == "" ||
				len(after.Tools) != 1 || after.Tools[0].ConnectionID != gmailConn {
				t.Fatalf("the agent after the connection (gmail connection %q): %d %+v", gmailConn, code, after)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "gmail_send_message", Arguments: map[string]any{"userId": "me", "body": map[string]any{"raw": raw + "Cg"}}})
			if err != nil || res.IsError {
				t.Fatalf("the second call: %v %s", err, toolText(res))
			}
			if d := listed(cs); strings.HasPrefix(d, "[NOT CONNECTED]") || d == "" {
				t.Errorf("gmail_send_message after the connection: %q", d)
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
