package mcpadapter

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
)

// scope is the MCP server of one principal of one tenant: its tool list is exactly the
// tools that principal may call.
type scope struct {
	adapter   *Adapter
	principal switchboard.Principal
	mcp       *server.MCPServer
	http      *server.StreamableHTTPServer

	refreshMu   sync.Mutex
	fingerprint string      // guarded by refreshMu
	built       atomic.Bool // a tool list has been set

	lastUsed atomic.Int64 // unix nanoseconds
	inFlight atomic.Int64 // open requests, including long-lived GET streams
}

func scopeKey(p switchboard.Principal) string { return string(p.TenantID) + "|" + p.ID() }

// scope returns the principal's scope, building it on first use. The scope is returned
// in use (inFlight counted under the adapter's lock, so Sweep cannot close it between
// here and serve); the caller must call done.
func (a *Adapter) scope(ctx context.Context, p switchboard.Principal) (*scope, error) {
	key := scopeKey(p)
	a.mu.Lock()
	s, ok := a.scopes[key]
	if !ok {
		s = a.newScope(p)
		a.scopes[key] = s
	}
	s.inFlight.Add(1)
	a.mu.Unlock()
	if err := s.ensure(ctx); err != nil {
		s.done()
		a.mu.Lock()
		if a.scopes[key] == s && !s.built.Load() {
			delete(a.scopes, key)
		}
		a.mu.Unlock()
		return nil, err
	}
	return s, nil
}

func (a *Adapter) newScope(p switchboard.Principal) *scope {
	s := &scope{adapter: a, principal: p}
	s.mcp = server.NewMCPServer("switchboard", a.opts.Version,
		server.WithToolCapabilities(true),
		server.WithRecovery(),
		server.WithInstructions("Tools of the SaaS accounts connected to Switchboard for tenant "+p.TenantSlug+
			". Tool names are {provider}_{operation}. Where a tool takes a `connection` argument, pick the account by its label."),
	)
	s.http = server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(Prefix+p.TenantSlug),
		server.WithSessionIdleTTL(a.opts.IdleTimeout),
		server.WithStreamableHTTPLogger(a.opts.Logger),
	)
	s.lastUsed.Store(time.Now().UnixNano())
	return s
}

// ensure builds the tool list once.
func (s *scope) ensure(ctx context.Context) error {
	if s.built.Load() {
		return nil
	}
	return s.refresh(ctx)
}

// refresh rebuilds the tool list from the principal's usable connections and replaces
// the server's tools when it changed (mcp-go then notifies the live sessions).
func (s *scope) refresh(ctx context.Context) error {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	bindings, err := s.adapter.opts.Router.Tools(ctx, s.principal)
	if err != nil {
		return err
	}
	parts := make([]string, 0, len(bindings)+1)
	tools := make([]server.ServerTool, 0, len(bindings))
	for _, b := range bindings {
		t, err := s.adapter.buildTool(b)
		if err != nil {
			return err
		}
		tools = append(tools, t)
		refs := make([]string, 0, len(b.Connections))
		for _, c := range b.Connections {
			refs = append(refs, c.ID+"="+c.Label)
		}
		parts = append(parts, b.Tool.Name+":"+strings.Join(refs, ","))
	}
	slices.Sort(parts)
	fp := "v1;" + strings.Join(parts, ";")
	if fp == s.fingerprint && s.built.Load() {
		return nil
	}
	s.mcp.SetTools(tools...)
	s.fingerprint = fp
	s.built.Store(true)
	return nil
}

// serve hands a request to the scope's server; the scope was taken in use by
// Adapter.scope, and serve gives it back.
func (s *scope) serve(w http.ResponseWriter, r *http.Request) {
	defer s.done()
	s.lastUsed.Store(time.Now().UnixNano())
	s.http.ServeHTTP(w, r)
}

// done ends one use of the scope.
func (s *scope) done() {
	s.lastUsed.Store(time.Now().UnixNano())
	s.inFlight.Add(-1)
}

func (s *scope) idle(now time.Time, timeout time.Duration) bool {
	return s.inFlight.Load() == 0 && now.Sub(time.Unix(0, s.lastUsed.Load())) > timeout
}

// close ends the scope's sessions and its session sweeper.
func (s *scope) close(ctx context.Context) { _ = s.http.Shutdown(ctx) }
