package mcp_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// TestRefreshRefusedByThisNodesGuard: a node whose address guard refuses the
// authorization server (it does not allow private addresses where its peers do) does
// not mark the connection needs_reconnect nor ask the server anything; a node that
// may reach the server refreshes the token.
func TestRefreshRefusedByThisNodesGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	as := newAuthServer(t)
	as.tokenTTL = "120" // due for the background refresh at once
	mcpURL := protectedServer(t, as)
	reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "vault", URL: mcpURL, Auth: "oauth"})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(reg.Authorization.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := r.conns.Callback(ctx, connections.CallbackInput{State: back.Query().Get("state"), Code: back.Query().Get("code"), Browser: reg.Authorization.CookieValue})
	if err != nil {
		t.Fatalf("callback: %v", err)
	}

	// Another node: the same connections, its own registry and remote MCP service with
	// its own guard (which supplies the provider's per-connection OAuth there).
	node := func(allowPrivate bool) *connections.Service {
		t.Helper()
		reg := providers.NewRegistry()
		svc := connections.NewService(r.store, reg, &providers.Transports{}, nil)
		svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "http://hub.test/oauth/callback"})
		guard, err := egress.NewGuard(allowPrivate, nil)
		if err != nil {
			t.Fatal(err)
		}
		remote, err := remotemcp.New(remotemcp.Options{Connections: svc, Guard: guard, Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(remote.Close)
		return svc
	}
	// The misconfigured node: a guard refusing private addresses.
	strict := node(false)
	if _, err := strict.RefreshDue(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := r.conns.Get(ctx, r.a, conn.ID)
	if err != nil || c.Status != connections.StatusActive || c.Version != conn.Version {
		t.Fatalf("after the misconfigured node's refresh: %s at version %d, %v; want active at version %d", c.Status, c.Version, err, conn.Version)
	}
	if diff := cmp.Diff([]string{"authorization_code resource=" + mcpURL}, as.grantTypes()); diff != "" {
		t.Errorf("token requests after the misconfigured node's refresh (-want +got):\n%s", diff)
	}

	// A node that may reach the server refreshes it.
	allowing := node(true)
	if n, err := allowing.RefreshDue(ctx); err != nil || n != 1 {
		t.Fatalf("refresh on the right node: %d refreshed, %v", n, err)
	}
	if c, err := r.conns.Get(ctx, r.a, conn.ID); err != nil || c.Status != connections.StatusActive || c.Version <= conn.Version {
		t.Errorf("after the right node's refresh: %s at version %d, %v; want active at a new version", c.Status, c.Version, err)
	}
}
