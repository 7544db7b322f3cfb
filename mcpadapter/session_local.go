package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/sessions"
)

// liveSession is a session this node's scope server holds (registered with mcp-go,
// with the client's capabilities and log level): one initialized here, or restored
// here from its record on first use.
type liveSession struct {
	seen     time.Time // the last request's start or end
	inFlight int       // open requests of the session, GET streams included
}

// holds reports whether this node's scope server holds the session.
func (s *scope) holds(id string) bool {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	_, ok := s.live[id]
	return ok
}

// begin takes the session in use on this node, restoring it from its record (load)
// first when this node does not hold it; end gives it back.
func (s *scope) begin(ctx context.Context, id string, now time.Time, load func() (sessions.Record, error)) error {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	ls, ok := s.live[id]
	if !ok {
		rec, err := load()
		if err != nil {
			return err
		}
		if err := s.restore(ctx, rec); err != nil {
			return err
		}
		ls = &liveSession{}
		s.live[id] = ls
		s.adapter.held.Add(1)
	}
	ls.seen = now
	ls.inFlight++
	return nil
}

// forget removes a session from the scope's view; callers hold sessMu.
func (s *scope) forget(id string) {
	if _, ok := s.live[id]; ok {
		delete(s.live, id)
		s.adapter.held.Add(-1)
	}
}

func (s *scope) end(id string, now time.Time) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if ls, ok := s.live[id]; ok {
		ls.seen = now
		ls.inFlight--
	}
}

// restore registers a recorded session with this node's server as mcp-go's own
// initialize does (client info, capabilities, negotiated version), then sets the log
// level the client chose. Callers hold sessMu.
func (s *scope) restore(ctx context.Context, rec sessions.Record) error {
	init, err := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-restore", "method": string(mcp.MethodInitialize),
		"params": map[string]any{
			"protocolVersion": rec.ProtocolVersion,
			"capabilities":    rawOr(rec.Capabilities),
			"clientInfo":      rawOr(rec.ClientInfo),
		},
	})
	if err != nil {
		return switchboard.Internal(err)
	}
	call := &mcptransport.SessionCall{ID: rec.ID, Internal: true}
	if w := s.post(ctx, call, "", "", init); w.Status != http.StatusOK {
		return switchboard.Internal(&restoreError{status: w.Status, body: w.Body.String()})
	}
	if rec.LogLevel == "" {
		return nil
	}
	level, _ := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-restore-level", "method": string(mcp.MethodSetLogLevel),
		"params": map[string]any{"level": rec.LogLevel},
	})
	if w := s.post(ctx, &mcptransport.SessionCall{Validated: true, Internal: true}, rec.ID, rec.ProtocolVersion, level); w.Status != http.StatusOK {
		return switchboard.Internal(&restoreError{status: w.Status, body: w.Body.String()})
	}
	return nil
}

type restoreError struct {
	status int
	body   string
}

func (e *restoreError) Error() string {
	return "restore MCP session: status " + http.StatusText(e.status) + ": " + e.body
}

func rawOr(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

// inject hands a message relayed from another node to this node's server, as if the
// client had posted it here.
func (s *scope) inject(ctx context.Context, id, version string, body []byte) {
	w := s.post(ctx, &mcptransport.SessionCall{Validated: true, Internal: true}, id, version, body)
	if w.Status >= 300 {
		s.adapter.opts.Logger.Debug("relayed MCP message not taken", "tenant", s.principal.TenantID, "status", w.Status)
	}
}

// post serves a JSON-RPC message of the adapter's own to the scope's server and returns
// the answer.
func (s *scope) post(ctx context.Context, call *mcptransport.SessionCall, id, version string, body []byte) *mcptransport.BufferWriter {
	ctx = mcptransport.WithSessionCall(switchboard.WithPrincipal(ctx, s.principal), call)
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://switchboard.internal"+s.path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		r.Header.Set(server.HeaderKeySessionID, id)
	}
	if version != "" {
		r.Header.Set(mcp.HeaderProtocolVersion, version)
	}
	w := mcptransport.NewBufferWriter()
	s.http.ServeHTTP(w, r)
	return w
}

// dropLocal removes a session's state from this node's server (its record is not
// touched): mcp-go's DELETE path, with the adapter's no-op Terminate.
func (s *scope) dropLocal(id string) { s.drop(id, false) }

// dropIdle is dropLocal for a session with no request open: one that a request took in
// use meanwhile stays.
func (s *scope) dropIdle(id string) { s.drop(id, true) }

// drop holds sessMu throughout, so a request cannot restore the session while mcp-go
// is dropping it (and find it gone); the unregister hook leaves the adapter's own drops
// to it.
func (s *scope) drop(id string, idleOnly bool) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if ls, ok := s.live[id]; ok && idleOnly && ls.inFlight > 0 {
		return
	}
	s.forget(id)
	ctx := mcptransport.WithSessionCall(switchboard.WithPrincipal(context.Background(), s.principal), &mcptransport.SessionCall{Validated: true, Internal: true})
	r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://switchboard.internal"+s.path, nil)
	r.Header.Set(server.HeaderKeySessionID, id)
	s.http.ServeHTTP(mcptransport.NewBufferWriter(), r)
}

// staleSessions returns the sessions this node holds that no request has used for
// longer than after: their state goes (their records stay; another request restores them).
func (s *scope) staleSessions(now time.Time, after time.Duration) []string {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	var out []string
	for id, ls := range s.live {
		if ls.inFlight <= 0 && now.Sub(ls.seen) > after {
			out = append(out, id)
		}
	}
	return out
}

// streaming returns the sessions with a request open on this node (a GET stream, a
// long call), which stay used while open.
func (s *scope) streaming() []string {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	var out []string
	for id, ls := range s.live {
		if ls.inFlight > 0 {
			out = append(out, id)
		}
	}
	return out
}

// sessionHooks keep the scope's view of its sessions in step with mcp-go (a session
// mcp-go unregistered on its own, at shutdown, is no longer held) and record the log level a client sets.
func (s *scope) sessionHooks() server.ServerOption {
	return func(srv *server.MCPServer) {
		hooks := srv.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(srv)
		}
		s.listHooks(hooks)
		hooks.AddOnUnregisterSession(func(ctx context.Context, sess server.ClientSession) {
			if mcptransport.InternalCall(ctx) {
				return // drop, which holds sessMu, has forgotten it
			}
			s.sessMu.Lock()
			s.forget(sess.SessionID())
			s.sessMu.Unlock()
		})
		hooks.AddAfterSetLevel(func(ctx context.Context, _ any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
			sess := server.ClientSessionFromContext(ctx)
			if sess == nil || req == nil || mcptransport.InternalCall(ctx) {
				return
			}
			id := sess.SessionID()
			s.adapter.sessionLogLevel(ctx, s.principal.TenantID, id, string(req.Params.Level))
			// The nodes that already hold the session take the new level too.
			body, _ := json.Marshal(map[string]any{
				"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-relay-level", "method": string(mcp.MethodSetLogLevel),
				"params": map[string]any{"level": req.Params.Level},
			})
			version := ""
			if v, ok := sess.(interface{ ProtocolVersion() string }); ok {
				version = v.ProtocolVersion()
			}
			s.adapter.publish(mcptransport.RelayMessage{Kind: mcptransport.RelayPost, Tenant: s.principal.TenantID, Session: id, Principal: s.principal.ID(),
				AgentID: s.agentID, ProtocolVersion: version, Body: body})
		})
	}
}
