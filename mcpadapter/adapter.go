// Package mcpadapter serves the registry's operations as MCP tools over Streamable HTTP:
// one URL per tenant (/mcp/{tenant}) listing exactly the tools of the connections the
// caller may use, and one per agent (/mcp/{tenant}/agents/{agent}) listing exactly the
// agent's tools, each authenticated by a bearer API key.
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
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/router"
)

// Authenticator turns a bearer API key into the principal it belongs to.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (switchboard.Principal, error)
}

// Agents is what the adapter needs of the agents service.
type Agents interface {
	// AgentAndSettings returns an agent of the tenant (none when id is "") and the
	// tenant's MCP settings; another tenant's agent is not found.
	AgentAndSettings(ctx context.Context, tenant switchboard.TenantID, id string) (agents.Agent, agents.Settings, error)
}

// Options configure an Adapter.
type Options struct {
	Router *router.Router
	Auth   Authenticator
	// Agents serves agent URLs and the tenants' tool modes; without it there are no
	// agent URLs and every tenant URL lists all its tools.
	Agents Agents
	// Extensions add management tools, resources and capabilities to every scope.
	Extensions []Extension
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed to call
	// the MCP URLs besides PublicURL's own; "*" allows any. Requests without an Origin
	// header (every non-browser client) are not affected.
	AllowedOrigins []string
	Logger         *slog.Logger
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

// Prefix is the path under which the adapter serves: /mcp/{tenant} and
// /mcp/{tenant}/agents/{agent}.
const Prefix = "/mcp/"

// endpoint splits an MCP path into the tenant slug and, at an agent URL, the agent ID.
func endpoint(path string) (slug, agentID string, ok bool) {
	rest, found := strings.CutPrefix(path, Prefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return parts[0], "", true
	case len(parts) == 3 && parts[0] != "" && parts[1] == "agents" && parts[2] != "":
		return parts[0], parts[2], true
	}
	return "", "", false
}

// ServeHTTP checks the request's origin, authenticates the caller, checks that the key
// belongs to the endpoint (the tenant in the URL; at an agent URL, a key of that
// agent), and hands the request to the caller's scope.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	slug, agentID, ok := endpoint(r.URL.Path)
	if !ok {
		writeError(w, switchboard.NotFound("MCP endpoint"))
		return
	}
	if err := a.checkOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, &switchboard.Error{Code: switchboard.CodeInvalid, Message: "method " + r.Method + " is not allowed on an MCP URL; use POST, GET or DELETE"}, http.StatusMethodNotAllowed)
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
		writeError(w, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this API key is not valid for this MCP URL; use " + a.endpointOf(p)})
		return
	}
	if agentID != p.AgentID {
		// An agent's key serves its own agent URL only, and a user's key the tenant URL:
		// the same answer whether or not the agent in the URL exists.
		writeError(w, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this API key is not valid for this MCP URL; use " + a.endpointOf(p)})
		return
	}
	if r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") == "" {
		// A stream outside any session would only hold a goroutine and the scope open.
		writeError(w, switchboard.Invalid("Mcp-Session-Id", "a GET stream needs the session id that initialize returned"))
		return
	}
	s, err := a.scope(r.Context(), p, agentID)
	if err != nil {
		e := switchboard.AsError(err)
		if e.Code == switchboard.CodeInternal {
			a.opts.Logger.Error("build MCP scope", "tenant", p.TenantID, "principal", p.ID(), "err", err)
		}
		writeError(w, e)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.opts.MaxBodyBytes)
	s.serve(w, r.WithContext(switchboard.WithPrincipal(r.Context(), p)))
}

// endpointOf is the MCP path a principal's key serves.
func (a *Adapter) endpointOf(p switchboard.Principal) string {
	if p.Kind == switchboard.PrincipalAgent {
		return Prefix + p.TenantSlug + "/agents/" + p.AgentID
	}
	return Prefix + p.TenantSlug
}

// ConnectionChanged refreshes the tool lists of the tenant's live scopes; their
// sessions are told with notifications/tools/list_changed when a list changes.
func (a *Adapter) ConnectionChanged(tenant switchboard.TenantID, _ string) {
	a.refreshWhere(func(s *scope) bool { return s.principal.TenantID == tenant })
}

// AgentChanged refreshes the live scopes of an agent (agentID "" for a change of the
// tenant's MCP settings: every scope of the tenant).
func (a *Adapter) AgentChanged(tenant switchboard.TenantID, agentID string) {
	a.refreshWhere(func(s *scope) bool {
		return s.principal.TenantID == tenant && (agentID == "" || s.agentID == agentID)
	})
}

// Refresh rebuilds the lists of every live scope of the tenant, for extensions whose
// tools or resources changed.
func (a *Adapter) Refresh(tenant switchboard.TenantID) { a.ConnectionChanged(tenant, "") }

func (a *Adapter) refreshWhere(match func(*scope) bool) {
	a.mu.Lock()
	var affected []*scope
	for _, s := range a.scopes {
		if match(s) {
			affected = append(affected, s)
		}
	}
	a.mu.Unlock()
	for _, s := range affected {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.refresh(ctx); err != nil {
				if switchboard.CodeOf(err) == switchboard.CodeNotFound {
					a.drop(s) // the agent was deleted: its sessions end
					return
				}
				a.opts.Logger.Error("refresh MCP tools", "tenant", s.principal.TenantID, "principal", s.principal.ID(), "err", err)
			}
		}()
	}
}

// drop removes a scope and ends its sessions.
func (a *Adapter) drop(s *scope) {
	key := scopeKey(s.principal, s.agentID)
	a.mu.Lock()
	if a.scopes[key] == s {
		delete(a.scopes, key)
	}
	a.mu.Unlock()
	s.close(context.Background())
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

// writeError answers an HTTP-level failure (before the MCP protocol starts) as JSON,
// with the code's status or the one given.
func writeError(w http.ResponseWriter, e *switchboard.Error, status ...int) {
	w.Header().Set("Content-Type", "application/json")
	code := e.Code.HTTPStatus()
	if len(status) > 0 {
		code = status[0]
	}
	w.WriteHeader(code)
	msg := e.Message
	if e.Code == switchboard.CodeInternal {
		msg = "internal error"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": string(e.Code), "message": msg}})
}
