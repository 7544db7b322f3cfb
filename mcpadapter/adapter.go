package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/sessions"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// Authenticator turns a bearer API key into the principal it belongs to.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (switchboard.Principal, error)
}

// TokenAuthenticator authenticates OAuth access tokens at the MCP URL (resource) they
// are presented at (identity.Server).
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token, resource string) (switchboard.Principal, error)
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
	// Tokens authenticates OAuth access tokens; without it only API keys are accepted.
	Tokens TokenAuthenticator
	// Agents serves agent URLs and the tenants' tool modes; without it there are no
	// agent URLs and every tenant URL lists all its tools.
	Agents Agents
	// Extensions add management tools, resources and capabilities to every scope.
	Extensions []Extension
	// Remote serves the prompts and resources of remote MCP servers (remotemcp.Service)
	// beside their tools, to whoever may use their tools; without it they are not served.
	Remote RemoteContent
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
	// Sessions records the MCP sessions the hub issues; without it they are kept in
	// this process only (sessions.Memory).
	Sessions mcptransport.SessionStore
	// SessionLimits bound the sessions (per principal, unused and idle lifetimes);
	// zero fields take sessions.DefaultLimits' (Idle: IdleTimeout).
	SessionLimits sessions.Limits
	// Relay carries session messages between the nodes serving one database; without
	// it this node serves alone.
	Relay mcptransport.Relay
	// StreamLog keeps the streams of calls whose client left where every node reads
	// them, so that Last-Event-ID resumes them on any node; without it a call's stream
	// resumes only on the node that ran it.
	StreamLog mcptransport.StreamLog
	// StreamRetry is the reconnection time the priming event of a call's stream gives
	// its client (the SSE retry field): how long a client whose stream ended before the
	// answer waits before it resumes the stream with Last-Event-ID. Zero gives
	// mcptransport.DefaultRetry.
	StreamRetry time.Duration
	// MaxHeldSessions bounds the sessions this node holds in memory (about 10 KiB
	// each in mcp-go's server); beyond it the least recently used idle ones are dropped
	// and restored from their records when used again. Default 10,000.
	MaxHeldSessions int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// KeyRecheck is how often Run authenticates the keys of open requests (GET streams)
	// again, ending those of keys revoked elsewhere; 30 s when zero. KeysRevoked ends
	// them at once for revocations in this process.
	KeyRecheck time.Duration
	// Telemetry, when set, gets a span per tools/call and the live-session count.
	Telemetry *telemetry.Telemetry
	// Admission, when set (the router's own), admits each POST by its caller's tenant
	// before its body is read: a request over the node's or its tenant's bound is
	// refused for the price of its headers and at most a small body (a tools/call gets
	// a tool error saying when to retry, anything else 503 or 429, each with
	// Retry-After), and one admitted keeps its place for the tool calls it makes.
	Admission *limits.Admission
	// ListPageSize is how many tools, prompts or resources one list answer holds; a
	// longer list is cut into pages, each pointing at the next with an opaque
	// nextCursor. DefaultListPageSize when zero.
	ListPageSize int
	// ToolBudget is the most hub tools a tenant URL lists by default: a tenant with
	// more, which has not chosen a tool mode in its MCP settings, is served in search
	// mode there (search_tools, describe_tool, call_tool), said in the instructions.
	// Agent URLs always list their selection. DefaultToolBudget when zero; negative:
	// no budget.
	ToolBudget int
	// Bodies, when set, is the process's body budget: each request's body is reserved
	// from it once the caller is authenticated and admitted, and refused (503 or 429,
	// a tools/call with a tool error, each with Retry-After) when it does not fit.
	Bodies *limits.BodyBudget
	// SchemaProfile is how tools/list writes input schemas (providers.SchemaProfile);
	// "" is providers.DefaultSchemaProfile, the portable one. Calls are validated
	// against the full schemas whatever it is.
	SchemaProfile providers.SchemaProfile
	// ConnectLinks, when set, lets a call that needs an account its person has not
	// connected (or reconnected, or granted a scope) ask the person to connect it from
	// the conversation (see connect.go); without it such a call fails saying what to
	// connect.
	ConnectLinks ConnectLinks
	// ConnectStateKey keys the requestState of a call that asked for a connection
	// (2026-07-28), shared by every node; required with ConnectLinks.
	ConnectStateKey []byte
}

// Adapter is the http.Handler of every MCP URL. It keeps one MCP server per scope (a
// principal of a tenant), built on first use from the tools that principal may call,
// refreshed when the tenant's connections change, and dropped when idle.
type Adapter struct {
	opts Options

	mu     sync.Mutex
	scopes map[string]*scope

	// node names this adapter among the nodes that share a relay.
	node      string
	records   *mcptransport.Records // the sessions' rows, as this node reads and writes them
	stopRelay func()
	held      atomic.Int64 // sessions held by the scopes' servers
	trimming  atomic.Bool

	open   openRequests
	modern mcptransport.Cancels // the stateless requests in flight, for their cancellation
	asks   callRequests         // the requests sent on calls' streams, waiting for answers
	// pending are the stateless calls held while their clients answer a remote's requests.
	pending pendingCalls
	defs    toolDefs // the registry tools' definitions, shared by the scopes
	// listings are the surface's own tools' inputs as the schema profile lists them.
	listings listings

	// life ends at Close, stopping the requests still running (they are detached from
	// their connections, which the HTTP server's shutdown ends).
	life    context.Context
	endLife context.CancelFunc
	// outliving counts the requests whose work may outlive their exchange
	// (ServeOutliving), so that Close lets the calls that released their streams end.
	outliving sync.WaitGroup
}

// New returns an Adapter.
func New(o Options) *Adapter {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SchemaProfile == "" {
		o.SchemaProfile = providers.DefaultSchemaProfile
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
	if o.Sessions == nil {
		o.Sessions = sessions.NewMemory()
	}
	if o.SessionLimits.PerPrincipal <= 0 {
		o.SessionLimits.PerPrincipal = sessions.DefaultLimits.PerPrincipal
	}
	if o.SessionLimits.Unused <= 0 {
		o.SessionLimits.Unused = sessions.DefaultLimits.Unused
	}
	if o.SessionLimits.Idle <= 0 {
		o.SessionLimits.Idle = o.IdleTimeout
	}
	if o.KeyRecheck <= 0 {
		o.KeyRecheck = defaultKeyRecheck
	}
	if o.MaxHeldSessions <= 0 {
		o.MaxHeldSessions = 10000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ListPageSize <= 0 {
		o.ListPageSize = DefaultListPageSize
	}
	if o.ToolBudget == 0 {
		o.ToolBudget = DefaultToolBudget
	}
	a := &Adapter{opts: o, scopes: map[string]*scope{}, node: switchboard.NewID("node")}
	a.records = mcptransport.NewRecords(mcptransport.Records{Store: o.Sessions, Limits: o.SessionLimits, Relay: o.Relay,
		Node: a.node, Logger: o.Logger, Drop: a.dropHeld})
	a.life, a.endLife = context.WithCancel(context.Background())
	if o.Relay != nil {
		a.stopRelay = o.Relay.Subscribe(a.relayed)
	}
	return a
}

// Prefix is the path under which the adapter serves: /mcp/{tenant} and
// /mcp/{tenant}/agents/{agent}.
const Prefix = "/mcp/"

// ServeHTTP answers CORS for browser clients (cors), checks the request's origin,
// authenticates the caller, checks that the key belongs to the endpoint (the tenant in
// the URL; at an agent URL, a key of that agent), and hands the request to the
// caller's scope.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	slug, agentID, ok := identity.ParseResourcePath(r.URL.Path)
	if !ok {
		writeError(w, switchboard.NotFound("MCP endpoint"))
		return
	}
	if a.cors(w, r) {
		return
	}
	if err := a.checkOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		writeError(w, &switchboard.Error{Code: switchboard.CodeInvalid, Message: "method " + r.Method + " is not allowed on an MCP URL; use POST, GET or DELETE"}, http.StatusMethodNotAllowed)
		return
	}
	key, ok := bearer(r)
	if !ok {
		limits.CloseUnread(w, r)
		// The challenge points OAuth clients at this URL's protected resource metadata.
		w.Header().Set("WWW-Authenticate", identity.Challenge(a.opts.PublicURL, slug, agentID, ""))
		writeError(w, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "send an API key as Authorization: Bearer <key>"})
		return
	}
	resource := identity.ResourceURL(a.opts.PublicURL, slug, agentID)
	p, err := a.authenticate(r.Context(), key, resource)
	if err != nil {
		e := outage(err)
		if e.Code == switchboard.CodeUnavailable && e.RetryAfter > 0 {
			answerUnavailable(w, r, e)
			return
		}
		limits.CloseUnread(w, r)
		if e.Code == switchboard.CodeUnauthorized {
			// The reason in plain words, in the header for OAuth clients and in the body.
			w.Header().Set("WWW-Authenticate", identity.Challenge(a.opts.PublicURL, slug, agentID, e.Message))
		}
		writeError(w, e)
		return
	}
	if p.TenantSlug != slug {
		limits.CloseUnread(w, r)
		// The same answer whether or not that tenant exists: nothing about other tenants leaks.
		writeError(w, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this API key is not valid for this MCP URL; use " + a.endpointOf(p)})
		return
	}
	if agentID == "" && p.AgentID != "" && a.opts.Tokens != nil && identity.LooksLikeAccessToken(key) {
		// A person gave an OAuth client one agent at the workspace URL: the token (bound
		// to this URL) serves that agent's tools here.
		agentID = p.AgentID
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
	if r.Method != http.MethodPost {
		a.serveAuthenticated(w, r, p, key, resource, agentID)
		return
	}
	// Before anything reads the body: a flood is refused for the price of its headers.
	slot, refusal := a.admit(r.Context(), p)
	if refusal != nil {
		a.refuse(w, r, refusal)
		return
	}
	// Admitted, the request is detached from its connection: a client that drops a
	// POST stream has not canceled its call (see serveRequest), except on 2026-07-28
	// (serveModern). A revoked key (track) and notifications/cancelled still end it.
	ctx, cancel := context.WithCancel(mcptransport.Detach(r.Context()))
	r = r.WithContext(limits.WithSlot(ctx, slot))
	work := func(w http.ResponseWriter, r *http.Request) {
		defer slot.Release()
		defer cancel()
		defer context.AfterFunc(a.life, cancel)()
		a.serveAuthenticated(w, r, p, key, resource, agentID)
	}
	if !mcptransport.MayOutlive(r) {
		work(w, r)
		return
	}
	// A call of a session may let its client poll (ReleaseStream): its work, which
	// holds its place in the admission to its end, may outlive the exchange.
	a.outliving.Add(1)
	mcptransport.ServeOutliving(w, r, a.opts.Logger, func(w http.ResponseWriter, r *http.Request) {
		defer a.outliving.Done()
		work(w, r)
	})
}

// serveAuthenticated serves a request of p at its MCP URL (admitted, when a POST):
// the caller's scope serves it, for as long as the key that authenticated it stays
// valid.
func (a *Adapter) serveAuthenticated(w http.ResponseWriter, r *http.Request, p switchboard.Principal, key, resource, agentID string) {
	if a.opts.Bodies != nil {
		release, err := a.opts.Bodies.Reserve(w, r)
		if err != nil {
			a.refuse(w, r, switchboard.AsError(err))
			return
		}
		defer release()
	}
	// The caller is known: its body takes as long as it needs.
	limits.LiftBodyDeadline(w)
	s, err := a.scope(r.Context(), p, agentID)
	if err != nil {
		e := outage(err)
		if e.Code == switchboard.CodeUnavailable && e.RetryAfter > 0 {
			answerUnavailable(w, r, e)
			return
		}
		if e.Code == switchboard.CodeInternal {
			a.opts.Logger.ErrorContext(r.Context(), "build MCP scope", "tenant", p.TenantID, "principal", p.ID(), "err", err)
		}
		writeError(w, e)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.opts.MaxBodyBytes)
	r, untrack := a.track(r, p, key, resource)
	defer untrack()
	s.serve(w, r.WithContext(switchboard.WithPrincipal(r.Context(), p)), p)
}

// authenticate returns who a bearer credential stands for at the MCP URL resource:
// an OAuth access token (only for the URL it was issued for), or an API key.
func (a *Adapter) authenticate(ctx context.Context, key, resource string) (switchboard.Principal, error) {
	if a.opts.Tokens != nil && identity.LooksLikeAccessToken(key) {
		return a.opts.Tokens.AuthenticateToken(ctx, key, resource)
	}
	return a.opts.Auth.Authenticate(ctx, key)
}

// admit takes a place for a POST of p's tenant: the refusal, or for a caller that went
// away while it waited, canceled.
func (a *Adapter) admit(ctx context.Context, p switchboard.Principal) (*limits.Slot, *switchboard.Error) {
	slot, err := a.opts.Admission.Admit(ctx, p.TenantID)
	if err == nil {
		return slot, nil
	}
	if se := (*switchboard.Error)(nil); errors.As(err, &se) {
		return nil, se
	}
	return nil, &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the request was canceled by its caller before it ran", Err: err}
}

// endpointOf is the MCP path a principal's key serves.
func (a *Adapter) endpointOf(p switchboard.Principal) string {
	if p.Kind == switchboard.PrincipalAgent {
		return Prefix + p.TenantSlug + "/agents/" + p.AgentID
	}
	return Prefix + p.TenantSlug
}

// ConnectionChanged refreshes the tool lists of the tenant's live scopes (every
// tenant's when tenant is empty: a gap in the change feed); their sessions are told
// with notifications/tools/list_changed when a list changes.
func (a *Adapter) ConnectionChanged(tenant switchboard.TenantID, _ string) {
	a.refreshWhere(func(s *scope) bool { return tenant == "" || s.principal.TenantID == tenant })
}

// AgentChanged refreshes the live scopes of an agent (agentID "" for a change of the
// tenant's MCP settings: every scope of the tenant; tenant "" too for every scope).
func (a *Adapter) AgentChanged(tenant switchboard.TenantID, agentID string) {
	a.refreshWhere(func(s *scope) bool {
		return tenant == "" || (s.principal.TenantID == tenant && (agentID == "" || s.agentID == agentID))
	})
}

// Refresh rebuilds the lists of every live scope of the tenant, for extensions whose
// tools or resources changed, and returns once they are rebuilt and their sessions
// told of the changes (list_changed has gone out when it returns).
func (a *Adapter) Refresh(tenant switchboard.TenantID) {
	a.refreshWhere(func(s *scope) bool { return s.principal.TenantID == tenant }).Wait()
}

// scopesWhere are the live scopes that match.
func (a *Adapter) scopesWhere(match func(*scope) bool) []*scope {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*scope
	for _, s := range a.scopes {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}

// tenantScopes are the live scopes of the tenant.
func (a *Adapter) tenantScopes(tenant switchboard.TenantID) []*scope {
	return a.scopesWhere(func(s *scope) bool { return s.principal.TenantID == tenant })
}

// refreshWhere rebuilds the matching scopes in the background; the WaitGroup is done
// when all of them are.
func (a *Adapter) refreshWhere(match func(*scope) bool) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, s := range a.scopesWhere(match) {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.refresh(ctx); err != nil {
				if switchboard.CodeOf(err) == switchboard.CodeNotFound {
					a.drop(s) // the agent was deleted: its sessions end
					return
				}
				a.opts.Logger.Error("refresh MCP tools", "tenant", s.principal.TenantID, "principal", s.principal.ID(), "err", err)
				return
			}
			s.connectionsUpdated()
		})
	}
	return &wg
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

// Sweep ends expired sessions, drops this node's state of sessions it has not served
// lately, and drops scopes idle for longer than the idle timeout; run it periodically.
func (a *Adapter) Sweep(now time.Time) {
	a.sweepSessions(context.Background(), now)
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

// Close drops every scope's state of its sessions (their records stay, so clients
// continue on another node or after a restart), stops the requests still running and
// ends the background work. The calls that let their clients poll, whose exchanges
// have ended, are given until ctx ends to finish.
func (a *Adapter) Close(ctx context.Context) {
	finished := make(chan struct{})
	go func() {
		a.outliving.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	a.endLife()
	if a.stopRelay != nil {
		a.stopRelay()
	}
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

// Run sweeps sessions and idle scopes every 30 seconds, and authenticates the keys of
// open requests again every KeyRecheck, until ctx ends.
func (a *Adapter) Run(ctx context.Context) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	keys := time.NewTicker(a.opts.KeyRecheck)
	defer keys.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.Sweep(a.opts.Now())
		case <-keys.C:
			a.recheckKeys(ctx)
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
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
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
