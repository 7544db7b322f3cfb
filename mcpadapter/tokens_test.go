package mcpadapter

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

// audienceTokens is a TokenAuthenticator that accepts one access token for one MCP
// URL, as identity.Server does, and records where each token was presented.
type audienceTokens struct {
	mu       sync.Mutex
	resource string
	p        switchboard.Principal
	asked    []string
}

func (a *audienceTokens) AuthenticateToken(_ context.Context, token, resource string) (switchboard.Principal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, token+" @ "+resource)
	if token != "h.p.s" || resource != a.resource {
		return switchboard.Principal{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "this access token was issued for another MCP URL"}
	}
	return a.p, nil
}

// TestAccessTokens checks that a bearer credential shaped like an access token goes to
// the token authenticator with the exact MCP URL it was sent to, is served there, and
// is refused with a challenge elsewhere; API keys still go to the key store.
func TestAccessTokens(t *testing.T) {
	t.Parallel()
	tokens := &audienceTokens{resource: "https://hub.test/mcp/acme", p: alice}
	e := newEnvWith(t, func(o *Options) { o.Tokens = tokens })
	initialize := func(path, bearer string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("WWW-Authenticate")
	}
	if status, _ := initialize("/mcp/acme", "h.p.s"); status != http.StatusOK {
		t.Errorf("token at its URL: %d, want 200", status)
	}
	status, challenge := initialize("/mcp/acme/agents/agt_triage", "h.p.s")
	if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
		!strings.Contains(challenge, `resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp/acme/agents/agt_triage"`) {
		t.Errorf("token at another URL: %d %q, want 401 with a challenge", status, challenge)
	}
	if status, _ := initialize("/mcp/acme", "key-alice"); status != http.StatusOK {
		t.Errorf("API key: %d, want 200", status)
	}
	want := []string{"h.p.s @ https://hub.test/mcp/acme", "h.p.s @ https://hub.test/mcp/acme/agents/agt_triage"}
	tokens.mu.Lock()
	defer tokens.mu.Unlock()
	if diff := cmp.Diff(want, tokens.asked); diff != "" {
		t.Errorf("tokens checked (-want +got):\n%s", diff)
	}
}

// TestAccessTokenForAnAgentAtTheWorkspaceURL checks that a token a person issued for
// the workspace URL as one agent is served there (an agent's API key is not).
func TestAccessTokenForAnAgentAtTheWorkspaceURL(t *testing.T) {
	t.Parallel()
	tokens := &audienceTokens{resource: "https://hub.test/mcp/acme", p: triage}
	e := newEnvWith(t, func(o *Options) { o.Tokens = tokens })
	for bearer, want := range map[string]int{"h.p.s": http.StatusOK, "key-triage": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s at the workspace URL: %d, want %d", bearer, res.StatusCode, want)
		}
	}
}
