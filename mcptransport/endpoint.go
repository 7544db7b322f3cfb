package mcptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/sessions"
)

// Endpoint is the transport of one MCP URL of one principal on this node: mcp-go's
// StreamableHTTPServer for the endpoint's MCP server, its event store and request id
// renumbering, and the sessions this node holds for it (live, restored from their
// records on first use) as mcp-go has them registered.
type Endpoint struct {
	HTTP   *server.StreamableHTTPServer
	Events *EventStore
	IDs    RequestIDs
	Path   string // the endpoint's URL path

	principal switchboard.Principal
	held      *atomic.Int64 // the sessions the node holds, all endpoints together
	logger    *slog.Logger

	mu   sync.Mutex
	live map[string]*liveSession // the sessions this node's server holds, by id

	clients sync.Map // session id -> *ListedSession registered with the server
}

// EndpointOptions configure an Endpoint.
type EndpointOptions struct {
	Principal switchboard.Principal
	Path      string
	// Held counts the sessions the node holds, shared by its endpoints.
	Held *atomic.Int64
	// EventsPerStream bounds the events kept per SSE stream for resumption.
	EventsPerStream int
	// Retry is the reconnection time a call's priming event gives (EventStore.Retry).
	Retry time.Duration
	// Log, when set, keeps the streams of calls whose client left where every node
	// reads them (CallStream.KeepWhenGone).
	Log    StreamLog
	Now    func() time.Time
	Logger *slog.Logger
}

// NewEndpoint returns an Endpoint; Attach gives it its MCP server, whose options must
// include the endpoint's ServerOption.
func NewEndpoint(o EndpointOptions) *Endpoint {
	e := &Endpoint{Path: o.Path, principal: o.Principal, held: o.Held, logger: o.Logger, live: map[string]*liveSession{}, IDs: NewRequestIDs()}
	e.Events = NewEventStore(o.EventsPerStream, o.Now)
	e.Events.IDs = e.IDs
	e.Events.Notified = e.MarkStreamed
	e.Events.Log, e.Events.Tenant, e.Events.Logger = o.Log, o.Principal.TenantID, o.Logger
	e.Events.Retry = o.Retry
	return e
}

// Attach builds the endpoint's mcp-go transport for srv.
func (e *Endpoint) Attach(srv *server.MCPServer) {
	e.HTTP = server.NewStreamableHTTPServer(srv,
		server.WithEndpointPath(e.Path),
		// No idle TTL: mcp-go's sweeper counts only the requests its transport serves.
		// The hub drops a session's state on this node itself (StaleSessions, after
		// sessions.Limits.Unused without a request), counting every request it serves,
		// plain calls and cached lists included.
		//
		// The hub checks Host and Origin itself, allowing the public URL's host on a
		// loopback listener (behind a local proxy).
		server.WithDisableLocalhostProtection(true),
		// A client's answer to a request pending on another node is relayed there, not
		// an error here.
		server.WithStreamableHTTPLogger(HideSessionIDs(QuietRelayedAnswers(e.logger))),
		server.WithEventStore(e.Events),
		// The hub issues, checks and records session ids itself.
		server.WithSessionIdManagerResolver(SessionIDs{}),
	)
}

// ServerOption keeps the endpoint's view of its sessions in step with the MCP server
// it is attached to: the sessions registered with it, and a session mcp-go unregistered
// on its own (at shutdown) is no longer held.
func (e *Endpoint) ServerOption() server.ServerOption {
	return func(srv *server.MCPServer) {
		hooks := srv.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(srv)
		}
		e.registryHooks(hooks)
		hooks.AddOnUnregisterSession(func(ctx context.Context, sess server.ClientSession) {
			if InternalCall(ctx) {
				return // drop, which holds mu, has forgotten it
			}
			e.mu.Lock()
			e.forget(sess.SessionID())
			e.mu.Unlock()
		})
	}
}

// Close ends the endpoint's sessions on this node.
func (e *Endpoint) Close(ctx context.Context) { _ = e.HTTP.Shutdown(ctx) }

// LiveCount is how many sessions this node's server holds for the endpoint.
func (e *Endpoint) LiveCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.live)
}

// IdleSession is a session held with no request open, and when it was last used.
type IdleSession struct {
	ID   string
	Seen time.Time
}

// Idle returns the sessions held with no request open.
func (e *Endpoint) Idle() []IdleSession {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []IdleSession
	for id, ls := range e.live {
		if ls.inFlight <= 0 {
			out = append(out, IdleSession{ID: id, Seen: ls.seen})
		}
	}
	return out
}

// liveSession is a session this node's server of the endpoint holds (registered with mcp-go,
// with the client's capabilities and log level): one initialized here, or restored
// here from its record on first use.
type liveSession struct {
	seen     time.Time // the last request's start or end
	inFlight int       // open requests of the session, GET streams included
}

// Holds reports whether this node's server of the endpoint holds the session.
func (e *Endpoint) Holds(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.live[id]
	return ok
}

// Begin takes the session in use on this node, restoring it from its record (load)
// first when this node does not hold it; end gives it back.
func (e *Endpoint) Begin(ctx context.Context, id string, now time.Time, load func() (sessions.Record, error)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ls, ok := e.live[id]
	if !ok {
		rec, err := load()
		if err != nil {
			return err
		}
		if err := e.restore(ctx, rec); err != nil {
			return err
		}
		ls = &liveSession{}
		e.live[id] = ls
		e.held.Add(1)
	}
	ls.seen = now
	ls.inFlight++
	return nil
}

// forget removes a session from the endpoint's view; callers hold mu.
func (e *Endpoint) forget(id string) {
	if _, ok := e.live[id]; ok {
		delete(e.live, id)
		e.held.Add(-1)
	}
}

func (e *Endpoint) End(id string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ls, ok := e.live[id]; ok {
		ls.seen = now
		ls.inFlight--
	}
}

// restore registers a recorded session with this node's server as mcp-go's own
// initialize does (client info, capabilities, negotiated version), then sets the log
// level the client chose and subscribes it to the resources it subscribed to. Callers
// hold mu.
func (e *Endpoint) restore(ctx context.Context, rec sessions.Record) error {
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
	call := &SessionCall{ID: rec.ID, Internal: true}
	if w := e.Post(ctx, call, "", "", init); w.Status != http.StatusOK {
		return switchboard.Internal(&restoreError{status: w.Status, body: w.Body.String()})
	}
	if rec.LogLevel != "" {
		level, _ := json.Marshal(map[string]any{
			"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-restore-level", "method": string(mcp.MethodSetLogLevel),
			"params": map[string]any{"level": rec.LogLevel},
		})
		if w := e.Post(ctx, &SessionCall{Validated: true, Internal: true}, rec.ID, rec.ProtocolVersion, level); w.Status != http.StatusOK {
			return switchboard.Internal(&restoreError{status: w.Status, body: w.Body.String()})
		}
	}
	// The resources the session subscribed to are followed here too.
	for _, uri := range rec.Subscriptions {
		sub, _ := json.Marshal(map[string]any{
			"jsonrpc": mcp.JSONRPC_VERSION, "id": "switchboard-restore-subscription", "method": string(mcp.MethodResourcesSubscribe),
			"params": map[string]any{"uri": uri},
		})
		_ = e.Post(ctx, &SessionCall{Validated: true, Internal: true}, rec.ID, rec.ProtocolVersion, sub)
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

// Inject hands a message relayed from another node to this node's server, as if the
// client had posted it here.
func (e *Endpoint) Inject(ctx context.Context, id, version string, body []byte) {
	w := e.Post(ctx, &SessionCall{Validated: true, Internal: true}, id, version, body)
	if w.Status >= 300 {
		e.logger.Debug("relayed MCP message not taken", "tenant", e.principal.TenantID, "status", w.Status)
	}
}

// Post serves a JSON-RPC message of the hub's own to the endpoint's server and returns
// the answer.
func (e *Endpoint) Post(ctx context.Context, call *SessionCall, id, version string, body []byte) *BufferWriter {
	ctx = WithSessionCall(switchboard.WithPrincipal(ctx, e.principal), call)
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://switchboard.internal"+e.Path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		r.Header.Set(server.HeaderKeySessionID, id)
	}
	if version != "" {
		r.Header.Set(mcp.HeaderProtocolVersion, version)
	}
	w := NewBufferWriter()
	e.HTTP.ServeHTTP(w, r)
	return w
}

// DropLocal removes a session's state from this node's server (its record is not
// touched): mcp-go's DELETE path, with SessionCall's no-op Terminate.
func (e *Endpoint) DropLocal(id string) { e.drop(id, false) }

// DropIdle is DropLocal for a session with no request open: one that a request took in
// use meanwhile stays.
func (e *Endpoint) DropIdle(id string) { e.drop(id, true) }

// drop holds mu throughout, so a request cannot restore the session while mcp-go
// is dropping it (and find it gone); the unregister hook leaves the hub's own drops
// to it.
func (e *Endpoint) drop(id string, idleOnly bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ls, ok := e.live[id]; ok && idleOnly && ls.inFlight > 0 {
		return
	}
	e.forget(id)
	ctx := WithSessionCall(switchboard.WithPrincipal(context.Background(), e.principal), &SessionCall{Validated: true, Internal: true})
	r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://switchboard.internal"+e.Path, nil)
	r.Header.Set(server.HeaderKeySessionID, id)
	e.HTTP.ServeHTTP(NewBufferWriter(), r)
}

// StaleSessions returns the sessions this node holds that no request has used for
// longer than after: their state goes (their records stay; another request restores them).
func (e *Endpoint) StaleSessions(now time.Time, after time.Duration) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for id, ls := range e.live {
		if ls.inFlight <= 0 && now.Sub(ls.seen) > after {
			out = append(out, id)
		}
	}
	return out
}

// Streaming returns the sessions with a request open on this node (a GET stream, a
// long call), which stay used while open.
func (e *Endpoint) Streaming() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for id, ls := range e.live {
		if ls.inFlight > 0 {
			out = append(out, id)
		}
	}
	return out
}

// ListedSession is a session registered with the endpoint's server, as the hub sees it.
type ListedSession struct {
	Session server.ClientSession
	// streamed is set once mcp-go streamed anything of the session as SSE itself (see
	// markStreamed): from then on it may answer the session's requests as SSE.
	streamed atomic.Bool
}

// Quiet reports whether mcp-go would answer the session's next request as plain
// JSON with nothing else: the session is registered with the endpoint's server, has no
// tools of its own, no notification waiting, and mcp-go never streamed anything of it.
func (e *Endpoint) Quiet(id string) bool {
	ls := e.Listed(id)
	if ls == nil || ls.streamed.Load() {
		return false
	}
	if len(ls.Session.NotificationChannel()) > 0 {
		return false
	}
	st, ok := ls.Session.(server.SessionWithTools)
	return !ok || len(st.GetSessionTools()) == 0
}

// Listed returns the session as registered with the endpoint's server, or nil.
func (e *Endpoint) Listed(id string) *ListedSession {
	v, ok := e.clients.Load(id)
	if !ok {
		return nil
	}
	return v.(*ListedSession)
}

// MarkStreamed records that mcp-go sent the session a notification. mcp-go switches a
// session's answers to SSE for good once a notification is sent to it (its session's
// upgradeToSSE, which it does not export), and every notification it sends either
// waits in the session's queue (Quiet sees it) or leaves on a stream, recorded
// in the event store first (StoreEvent calls this): the hub's flag is set before the
// queue is empty again. A notification mcp-go drops because the session's queue is
// full leaves no trace; mcp-go then answers the session's next request as SSE, which
// serveSession sees (MarkIfStreamed).
func (e *Endpoint) MarkStreamed(id string) {
	if ls := e.Listed(id); ls != nil {
		ls.streamed.Store(true)
	}
}

// MarkIfStreamed calls MarkStreamed when mcp-go answered the session's POST on w as an
// SSE stream.
func (e *Endpoint) MarkIfStreamed(id string, w http.ResponseWriter) {
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		e.MarkStreamed(id)
	}
}

// registryHooks keep the endpoint's view of the sessions registered with its server,
// for Quiet.
func (e *Endpoint) registryHooks(hooks *server.Hooks) {
	hooks.AddOnRegisterSession(func(_ context.Context, sess server.ClientSession) {
		e.clients.Store(sess.SessionID(), &ListedSession{Session: sess})
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		if ls := e.Listed(sess.SessionID()); ls != nil && ls.Session == sess {
			e.clients.CompareAndDelete(sess.SessionID(), ls)
		}
	})
}
