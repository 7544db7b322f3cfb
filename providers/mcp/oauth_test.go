package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// authServer is an OAuth 2.1 authorization server as the MCP authorization spec
// expects one: metadata (RFC 8414), dynamic client registration (RFC 7591), the
// authorization endpoint with PKCE S256 only, and a token endpoint for the code and
// refresh grants that checks the verifier, the redirect URI and the resource (RFC 8707).
type authServer struct {
	http *httptest.Server

	mu       sync.Mutex
	clients  map[string][]string // client id -> redirect URIs
	codes    map[string]codeGrant
	access   map[string]bool
	refresh  map[string]bool
	grants   []url.Values // every token request's form, secrets included (the test checks them)
	tokenTTL string       // expires_in of issued tokens
	n        int
}

type codeGrant struct{ client, redirect, challenge, resource string }

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	a := &authServer{clients: map[string][]string{}, codes: map[string]codeGrant{}, access: map[string]bool{}, refresh: map[string]bool{}, tokenTTL: "3600"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": a.http.URL, "authorization_endpoint": a.http.URL + "/authorize", "token_endpoint": a.http.URL + "/token",
			"registration_endpoint": a.http.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_redirect_uri"})
			return
		}
		a.mu.Lock()
		a.n++
		id := "client-" + string(rune('0'+a.n))
		a.clients[id] = req.RedirectURIs
		a.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		defer a.mu.Unlock()
		redirects := a.clients[q.Get("client_id")]
		if len(redirects) == 0 || redirects[0] != q.Get("redirect_uri") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		a.n++
		code := "code-" + string(rune('a'+a.n))
		a.codes[code] = codeGrant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource")}
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f := r.PostForm
		a.mu.Lock()
		defer a.mu.Unlock()
		a.grants = append(a.grants, f)
		switch f.Get("grant_type") {
		case "authorization_code":
			g, ok := a.codes[f.Get("code")]
			delete(a.codes, f.Get("code"))
			sum := sha256.Sum256([]byte(f.Get("code_verifier")))
			if !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri") || g.resource != f.Get("resource") ||
				base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			if !a.refresh[f.Get("refresh_token")] {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(a.refresh, f.Get("refresh_token")) // rotated
		default:
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
			return
		}
		a.n++
		access, refresh := "at-"+string(rune('a'+a.n)), "rt-"+string(rune('a'+a.n))
		a.access[access], a.refresh[refresh] = true, true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": refresh, "expires_in": json.Number(a.tokenTTL)})
	})
	a.http = httptest.NewServer(mux)
	t.Cleanup(a.http.Close)
	return a
}

func (a *authServer) valid(token string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.access[token]
}

func (a *authServer) grantTypes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, g := range a.grants {
		out = append(out, g.Get("grant_type")+" resource="+g.Get("resource"))
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// protectedServer is an MCP server that takes only the authorization server's tokens;
// without one it answers 401 naming its protected resource metadata (RFC 9728).
func protectedServer(t *testing.T, as *authServer) string {
	t.Helper()
	m := server.NewMCPServer("protected", "1.0", server.WithToolCapabilities(true))
	m.AddTool(mcpgo.NewTool("secret", mcpgo.WithDescription("Tell the secret."), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("42"), nil
		})
	h := server.NewStreamableHTTPServer(m)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			writeJSON(w, http.StatusOK, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{as.http.URL}})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		testwait.CloseServer(t, srv)
	})
	return srv.URL + "/mcp"
}

// TestOAuthAuthorizationCode registers a server that wants OAuth: the hub finds its
// authorization server through the 401's protected resource metadata, registers a
// client dynamically with the hub's callback, and sends the person to authorize with
// PKCE and the resource; the callback (state bound to the browser) exchanges the code,
// and the connection's tools run with the token. An access token near its expiry is
// refreshed (with the resource) and the rotated refresh token kept; a refused refresh
// marks the connection needs_reconnect.
func TestOAuthAuthorizationCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	as := newAuthServer(t)
	as.tokenTTL = "120" // the first token expires within the refresh window
	mcpURL := protectedServer(t, as)

	reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "vault", URL: mcpURL, Auth: "oauth"})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if reg.Connection != nil || reg.Authorization == nil {
		t.Fatalf("register = %+v, want an authorization to start", reg)
	}
	au, err := url.Parse(reg.Authorization.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := au.Query()
	got := map[string]string{"path": au.Path, "client_id": q.Get("client_id"), "redirect_uri": q.Get("redirect_uri"), "method": q.Get("code_challenge_method"), "resource": q.Get("resource")}
	want := map[string]string{"path": "/authorize", "client_id": "client-1", "redirect_uri": "http://hub.test/oauth/callback", "method": "S256", "resource": mcpURL}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("authorization URL (-want +got):\n%s", diff)
	}

	// The browser: the authorization server redirects back to the hub's callback.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(reg.Authorization.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	in := connections.CallbackInput{State: back.Query().Get("state"), Code: back.Query().Get("code"), Browser: "another browser"}
	if _, err := r.conns.Callback(ctx, in); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Fatalf("callback in another browser = %v, want forbidden", err)
	}
	// Start again, as a person would (the refusal left that flow to its own browser).
	reg, err = r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "vault", URL: mcpURL, Auth: "oauth"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = noFollow.Get(reg.Authorization.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ = url.Parse(resp.Header.Get("Location"))
	conn, err := r.conns.Callback(ctx, connections.CallbackInput{State: back.Query().Get("state"), Code: back.Query().Get("code"), Browser: reg.Authorization.CookieValue})
	if err != nil {
		t.Fatalf("callback: %v", err)
	}
	if conn.Provider != remotemcp.Provider || conn.AccountLabel != "vault" || conn.OwnerUserID != r.a.UserID || !conn.Refreshable {
		t.Errorf("connection = %+v", conn)
	}
	call := func() (string, error) {
		out, err := r.router.Execute(ctx, r.a, router.Request{Tool: "vault_secret", ConnectionID: conn.ID, Args: json.RawMessage(`{}`)})
		if err != nil {
			return "", err
		}
		return out.(*providers.ContentResult).Text(), nil
	}
	as.mu.Lock()
	as.tokenTTL = "3600"
	as.mu.Unlock()
	if got, err := call(); err != nil || got != "42" {
		t.Fatalf("call = %q, %v", got, err)
	}
	if diff := cmp.Diff([]string{"vault_secret"}, r.toolNames(t, r.a)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if got := r.toolNames(t, r.b); len(got) != 0 {
		t.Errorf("another tenant's tools = %v", got)
	}
	if _, err := r.router.Execute(ctx, r.b, router.Request{Tool: "vault_secret", ConnectionID: conn.ID, Args: json.RawMessage(`{}`)}); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("another tenant's call = %v, want not_found", err)
	}
	wantGrants := []string{"authorization_code resource=" + mcpURL, "refresh_token resource=" + mcpURL}
	if diff := cmp.Diff(wantGrants, as.grantTypes()); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
	if c, err := r.conns.Get(ctx, r.a, conn.ID); err != nil || c.RefreshedAt == nil || c.Version <= conn.Version {
		t.Errorf("connection after the refresh = %+v, %v; want refreshed at a new version", c, err)
	}

	// An hour later the refresh token is refused: the connection needs reconnecting.
	as.mu.Lock()
	clear(as.refresh)
	as.mu.Unlock()
	r.clock.Store(int64(3590 * time.Second))
	if _, err := call(); switchboard.CodeOf(err) != switchboard.CodeReconnect {
		t.Fatalf("call with a refused refresh = %v, want reconnect", err)
	}
	if c, err := r.conns.Get(ctx, r.a, conn.ID); err != nil || c.Status != connections.StatusNeedsReconnect {
		t.Errorf("connection after a refused refresh = %+v, %v; want needs_reconnect", c.Status, err)
	}
	r.audit.mu.Lock()
	defer r.audit.mu.Unlock()
	for _, e := range r.audit.events {
		if strings.Contains(e.Detail, "rt-") || strings.Contains(e.Detail, "at-") {
			t.Errorf("audit detail %q carries a token", e.Detail)
		}
	}
}
