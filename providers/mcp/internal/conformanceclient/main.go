// Command conformanceclient is the client the MCP conformance suite's client auth
// scenarios drive (npx conformance client --command conformanceclient): given a remote
// MCP server's URL, it registers the server with a hub of its own (SQLite in a temporary
// directory) with auth oauth, follows the authorization URL to the hub's callback as a
// browser would (the suite's authorization server approves at once; a pre-registered
// client comes from MCP_CONFORMANCE_CONTEXT), then lists the
// server's tools through the router and calls each. It exits 1 on any failure.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/migrations"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformanceclient SERVER_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "conformanceclient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, serverURL string) error {
	dir, err := os.MkdirTemp("", "conformanceclient")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := database.Open(ctx, "sqlite:"+filepath.Join(dir, "hub.db"))
	if err != nil {
		return err
	}
	defer database.Close(db)
	if err := migrations.Run(ctx, db); err != nil {
		return err
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(dir, "master.key"))
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg := providers.NewRegistry()
	svc := connections.NewService(connections.NewStore(db, kr), reg, &providers.Transports{}, nil)
	svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "http://127.0.0.1:1/oauth/callback", Logger: log})
	guard, err := egress.NewGuard(true, nil) // the suite's servers are on localhost
	if err != nil {
		return err
	}
	remote, err := remotemcp.New(remotemcp.Options{Connections: svc, Guard: guard, Logger: log, Registry: reg})
	if err != nil {
		return err
	}
	defer remote.Close()
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Logger: log, ArgsKey: []byte("conformance")})
	ts := tenants.NewStore(db)
	defer ts.Close()
	ten, err := ts.CreateTenant(ctx, "conformance", "Conformance")
	if err != nil {
		return err
	}
	u, err := ts.CreateUser(ctx, ten.ID, "owner@conformance.test", switchboard.RoleOwner)
	if err != nil {
		return err
	}
	p := switchboard.Principal{TenantID: ten.ID, TenantSlug: ten.Slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: switchboard.RoleOwner}

	in := remotemcp.RegisterInput{Name: "conformance", URL: serverURL, Auth: remotemcp.AuthOAuth}
	// Scenarios with a pre-registered client pass it in MCP_CONFORMANCE_CONTEXT, as a
	// tenant would type it into the registration.
	var sc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		in.ClientID, in.ClientSecret = sc.ClientID, sc.ClientSecret
	}
	reg1, err := remote.Register(ctx, p, in)
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if reg1.Authorization == nil {
		return fmt.Errorf("register: no authorization URL")
	}
	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(reg1.Authorization.URL)
	if err != nil {
		return fmt.Errorf("authorize: %w", err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode/100 != 3 {
		return fmt.Errorf("authorize answered %d, not a redirect", resp.StatusCode)
	}
	q := back.Query()
	conn, err := svc.Callback(ctx, connections.CallbackInput{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), Browser: reg1.Authorization.CookieValue})
	if err != nil {
		return fmt.Errorf("callback: %w", err)
	}
	bindings, err := rtr.Tools(ctx, p)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	if len(bindings) == 0 {
		return fmt.Errorf("the server listed no tools")
	}
	for _, b := range bindings {
		if _, err := rtr.Execute(ctx, p, router.Request{Tool: b.Tool.Name, ConnectionID: conn.ID, Args: json.RawMessage(`{}`)}); err != nil {
			return fmt.Errorf("call %s: %w", b.Tool.Name, err)
		}
	}
	return nil
}
