// Package mcpadapter serves the registry's operations as MCP tools over Streamable HTTP:
// one URL per tenant (/mcp/{tenant}), authenticated by a bearer API key, listing exactly
// the tools of the connections the caller may use.
package mcpadapter

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
)

// Authenticator turns a bearer API key into the principal it belongs to.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (switchboard.Principal, error)
}

// Options configure an Adapter.
type Options struct {
	Router *router.Router
	Auth   Authenticator
	Logger *slog.Logger
	// PublicURL is where people reach this deployment, for links in tool errors
	// ("reconnect it at …"). No trailing slash.
	PublicURL string
	// Version is reported in the MCP initialize answer.
	Version string
	// IdleTimeout drops a scope's server (and its sessions) after that long without a request.
	IdleTimeout time.Duration
	// MaxBodyBytes bounds a request body; larger ones are refused.
	MaxBodyBytes int64
}

// Adapter is the http.Handler of every MCP URL. It keeps one MCP server per scope (a
// principal of a tenant), built on first use from the tools that principal may call,
// refreshed when the tenant's connections change, and dropped when idle.
type Adapter struct {
	opts Options

	mu     sync.Mutex
	scopes map[string]*scope
}

// New returns an Adapter.
func New(o Options) *Adapter {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	return &Adapter{opts: o, scopes: map[string]*scope{}}
}

// Prefix is the path under which the adapter serves: /mcp/{tenant}.
const Prefix = "/mcp/"

// ServeHTTP authenticates the caller, checks that the key belongs to the tenant in the
// URL, and hands the request to the caller's scope.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	slug, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, Prefix), "/")
	if !strings.HasPrefix(r.URL.Path, Prefix) || slug == "" || rest != "" {
		writeError(w, switchboard.NotFound("MCP endpoint"))
		return
	}
	key, ok := bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
		writeError(w, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "send an API key as Authorization: Bearer <key>"})
		return
	}
	p, err := a.opts.Auth.Authenticate(r.Context(), key)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard", error="invalid_token"`)
		writeError(w, switchboard.AsError(err))
		return
	}
	if p.TenantSlug != slug {
		// The same answer whether or not that tenant exists: nothing about other tenants leaks.
		writeError(w, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this API key is not valid for this MCP URL; use /mcp/" + p.TenantSlug})
		return
	}
	if r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") == "" {
		// A stream outside any session would only hold a goroutine and the scope open.
		writeError(w, switchboard.Invalid("Mcp-Session-Id", "a GET stream needs the session id that initialize returned"))
		return
	}
	s, err := a.scope(r.Context(), p)
	if err != nil {
		writeError(w, switchboard.AsError(err))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.opts.MaxBodyBytes)
	s.serve(w, r.WithContext(switchboard.WithPrincipal(r.Context(), p)))
}

// ConnectionChanged refreshes the tool lists of the tenant's live scopes; their
// sessions are told with notifications/tools/list_changed when a list changes.
func (a *Adapter) ConnectionChanged(tenant switchboard.TenantID, _ string) {
	a.mu.Lock()
	var affected []*scope
	for _, s := range a.scopes {
		if s.principal.TenantID == tenant {
			affected = append(affected, s)
		}
	}
	a.mu.Unlock()
	for _, s := range affected {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.refresh(ctx); err != nil {
				a.opts.Logger.Error("refresh MCP tools", "tenant", tenant, "principal", s.principal.ID(), "err", err)
			}
		}()
	}
}

// Sweep drops scopes idle for longer than the idle timeout; run it periodically.
func (a *Adapter) Sweep(now time.Time) {
	a.mu.Lock()
	var dropped []*scope
	for k, s := range a.scopes {
		if s.idle(now, a.opts.IdleTimeout) {
			delete(a.scopes, k)
			dropped = append(dropped, s)
		}
	}
	a.mu.Unlock()
	for _, s := range dropped {
		s.close(context.Background())
	}
}

// Close ends every scope's sessions and background work.
func (a *Adapter) Close(ctx context.Context) {
	a.mu.Lock()
	all := make([]*scope, 0, len(a.scopes))
	for k, s := range a.scopes {
		delete(a.scopes, k)
		all = append(all, s)
	}
	a.mu.Unlock()
	for _, s := range all {
		s.close(ctx)
	}
}

// Run sweeps idle scopes every minute until ctx ends.
func (a *Adapter) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.Sweep(now)
		}
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		return "", false
	}
	return strings.TrimSpace(key), true
}

// writeError answers an HTTP-level failure (before the MCP protocol starts) as JSON.
func writeError(w http.ResponseWriter, e *switchboard.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code.HTTPStatus())
	msg := e.Message
	if e.Code == switchboard.CodeInternal {
		msg = "internal error"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": string(e.Code), "message": msg}})
}
