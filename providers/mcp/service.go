// Package remotemcp makes remote MCP servers providers: a tenant registers a server
// (Streamable HTTP or the legacy SSE transport; no auth, a bearer token, OAuth client
// credentials, or the OAuth authorization code flow of the MCP authorization spec) as a
// connection of provider "mcp", and its tools join the tenant's tool list as
// <name>_<tool>, run through the router over one pooled session per connection.
//
// Start from [Service] (from [Options]), which registers servers ([RegisterInput],
// answering [Registered]) and keeps their sessions, and [Spec], the provider "mcp".
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// Options configure a Service.
type Options struct {
	// Connections stores the servers as connections and refreshes their OAuth tokens.
	Connections *connections.Service
	// Guard refuses private addresses; nil refuses them all.
	Guard *egress.Guard
	// IdleTimeout closes a session unused this long (default 10 minutes); the next use
	// opens a new one.
	IdleTimeout time.Duration
	// Timeout bounds opening a session and each call (default 60 seconds).
	Timeout time.Duration
	// Version is the hub's version, sent as the client's.
	Version string
	Logger  *slog.Logger
	// Registry holds the built-in providers: a server may not take a name that would
	// name its tools like theirs (see providers.Registry.ReservedPrefix). Nil reserves
	// only the hub's own prefix, switchboard.
	Registry *providers.Registry
	// Wrap, when set, wraps the transport of every request to a server (telemetry's
	// tracing and upstream metrics, as providers.Transports.Wrap does for providers).
	Wrap func(provider string, next http.RoundTripper) http.RoundTripper
}

// Service registers remote MCP servers and keeps a live session per connection. Its
// provider, whose tools exist per connection, is in the registry like any other (see
// New). Safe for concurrent use.
type Service struct {
	conns     *connections.Service
	guard     *egress.Guard
	transport http.RoundTripper
	oauthHTTP *http.Client
	idle      time.Duration
	timeout   time.Duration
	version   string
	log       *slog.Logger
	spec      *providers.Spec
	reg       *providers.Registry

	mu       sync.Mutex
	sessions map[string]*session    // by connection id
	opening  map[string]*sync.Mutex // one open at a time per connection
	changed  func(switchboard.TenantID, string)
	updated  []func(switchboard.TenantID, string, string) // OnResourceUpdated's
	// names, when set, refuses a name another kind of the tenant's providers uses as its
	// tools' prefix (its APIs added by their description); set while wiring.
	names func(ctx context.Context, p switchboard.Principal, name string) error
}

// New returns a Service and registers its provider (Provider, whose tools are each
// connection's server's, and whose OAuth is each server's authorization server's) in
// o.Registry.
// Call it while wiring, before the registry is shared.
func New(o Options) (*Service, error) {
	if o.Connections == nil {
		return nil, errors.New("remotemcp: no connections service")
	}
	if o.Guard == nil {
		g, err := egress.NewGuard(false, nil)
		if err != nil {
			return nil, err
		}
		o.Guard = g
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = providers.NewRegistry()
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	var tr http.RoundTripper = o.Guard.Transport()
	if o.Wrap != nil {
		tr = o.Wrap(Provider, tr)
	}
	tr = providers.TimedTransport(tr) // a call's time at the server, for its metrics
	s := &Service{
		conns: o.Connections, guard: o.Guard, transport: tr,
		oauthHTTP: egress.Client(tr, 30*time.Second, true),
		idle:      o.IdleTimeout, timeout: o.Timeout, version: o.Version, log: o.Logger, spec: Spec(), reg: o.Registry,
		sessions: map[string]*session{}, opening: map[string]*sync.Mutex{},
		changed: o.Connections.NotifyChanged,
	}
	s.spec.Tools = s.connectionTools
	s.spec.ConnectionOAuth = &providers.ConnectionOAuth{Finish: s.finishOAuth, Refresh: s.refreshOAuth}
	if err := o.Registry.Register(*s.spec); err != nil {
		return nil, fmt.Errorf("remotemcp: %w", err)
	}
	return s, nil
}

// SetNameCheck makes registration refuse a name that check refuses: another kind of the
// tenant's providers whose tools are prefixed by their name (the tenant's APIs added by
// their OpenAPI description). Call it once, while wiring.
func (s *Service) SetNameCheck(check func(ctx context.Context, p switchboard.Principal, name string) error) {
	s.names = check
}

// Registered is the outcome of a registration: the connection, or, for the OAuth
// authorization code flow, where to send the person to authorize the hub.
type Registered struct {
	Connection    *connections.Connection
	Tools         []string
	Authorization *connections.Authorization
}

// Register registers a remote MCP server for p (a user): it checks the input and the
// server's address, then, except for OAuth authorization code, opens a session with the
// given credentials (which proves them) and stores the connection with its secret
// sealed. With auth oauth it discovers the server's authorization server, registers a
// client there when none is given, and returns the authorization URL; the connection is
// stored by the hub's OAuth callback. Bad input changes nothing.
func (s *Service) Register(ctx context.Context, p switchboard.Principal, in RegisterInput) (Registered, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Registered{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can register a remote MCP server")
	}
	in.normalize()
	if err := in.validate(); err != nil {
		return Registered{}, err
	}
	if err := s.checkName(ctx, p, in.Name); err != nil {
		return Registered{}, err
	}
	if err := s.checkAddress(ctx, "url", in.URL); err != nil {
		return Registered{}, err
	}
	if in.Auth == AuthClientCredentials {
		if err := s.checkAddress(ctx, "token_url", in.TokenURL); err != nil {
			return Registered{}, err
		}
	}
	if in.Auth == AuthOAuth {
		a, err := s.startOAuth(ctx, p, in)
		if err != nil {
			return Registered{}, err
		}
		return Registered{Authorization: &a}, nil
	}
	meta := map[string]string{metaURL: in.URL, metaTransport: in.Transport, metaName: in.Name, metaAuth: in.Auth}
	creds := connections.Credentials{}
	switch in.Auth {
	case AuthBearer:
		creds.AccessToken, creds.TokenType = in.Token, "Bearer"
	case AuthClientCredentials:
		creds.ClientID, creds.ClientSecret = in.ClientID, in.ClientSecret
		meta[metaTokenURL] = in.TokenURL
	}
	c := connections.Connection{
		Provider: Provider, AuthKind: authKind(in.Auth), AccountID: in.Name, AccountLabel: in.Name,
		Scopes: strings.Join(in.Scopes, " "), Meta: meta, Shared: in.Shared, Status: connections.StatusActive,
	}
	ep, err := s.endpointOf(c, creds)
	if err != nil {
		return Registered{}, switchboard.Internal(err)
	}
	sess, err := s.dial(ctx, ep, nil)
	if err != nil {
		return Registered{}, registrationError(in, err)
	}
	tools, _ := sess.toolList()
	sess.close()
	stored, err := s.conns.CreateExternal(ctx, p, c, creds)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeConflict {
			return Registered{}, &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: fmt.Sprintf("%q is the name of another remote MCP server of the tenant; pick another", in.Name)}
		}
		return Registered{}, err
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return Registered{Connection: &stored, Tools: names}, nil
}

// registrationError says which field a failed first session points at.
func registrationError(in RegisterInput, err error) error {
	var ue *providers.UpstreamError
	if errors.As(err, &ue) && ue.Code == switchboard.CodeReconnect {
		field := "token"
		if in.Auth == AuthClientCredentials {
			field = "client_secret"
		} else if in.Auth == AuthNone {
			field = "auth"
		}
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: "the remote MCP server refused it (HTTP 401): check the credentials and the auth method", Err: err}
	}
	return err
}

// checkAddress refuses a URL whose host resolves to an address the guard refuses.
func (s *Service) checkAddress(ctx context.Context, field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return switchboard.Invalid(field, "is not a URL")
	}
	if err := s.guard.CheckHost(ctx, u.Hostname()); err != nil {
		var re *egress.RefusedError
		if errors.As(err, &re) {
			return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: re.Error()}
		}
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: "its host does not resolve: " + u.Hostname(), Err: err}
	}
	return nil
}

// connectionTools lists a connection's tools from its session, opening one if needed
// (the provider's Spec.Tools).
func (s *Service) connectionTools(ctx context.Context, c providers.Connection) ([]*providers.Tool, error) {
	sess, err := s.session(ctx, c.Tenant, c.ID, c.Version)
	if err != nil {
		return nil, err
	}
	tools, _ := sess.toolList()
	return tools, nil
}

// session returns the connection's live session, opening it when there is none, when
// the server dropped it, or when it was opened on an older version of the connection
// (new credentials).
func (s *Service) session(ctx context.Context, tenant switchboard.TenantID, id string, version int64) (*session, error) {
	if sess := s.live(tenant, id, version); sess != nil {
		return sess, nil
	}
	s.mu.Lock()
	lock := s.opening[id]
	if lock == nil {
		lock = &sync.Mutex{}
		s.opening[id] = lock
	}
	s.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	if sess := s.live(tenant, id, version); sess != nil {
		return sess, nil
	}
	c, creds, err := s.conns.Open(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	if c.Provider != Provider {
		return nil, switchboard.NotFound("connection")
	}
	ep, err := s.endpointOf(c, creds)
	if err != nil {
		return nil, switchboard.Internal(err)
	}
	sess, err := s.dial(ctx, ep, s.toolsChanged)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	old := s.sessions[id]
	s.sessions[id] = sess
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	return sess, nil
}

// live returns the connection's cached session if it is still good.
func (s *Service) live(tenant switchboard.TenantID, id string, version int64) *session {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil || sess.tenant != tenant || sess.closed.Load() || sess.lost.Load() || (version != 0 && sess.version < version) {
		return nil
	}
	sess.touch()
	return sess
}

// drop closes a session and forgets it, if it is still the connection's.
func (s *Service) drop(sess *session) {
	s.mu.Lock()
	if s.sessions[sess.id] == sess {
		delete(s.sessions, sess.id)
	}
	s.mu.Unlock()
	sess.close()
}

// callTool calls a remote tool on the connection's session. When the session turns out
// to be gone (the server restarted and forgot it, or was down meanwhile), a new session
// is opened and the call sent once more: the server had not received it.
func (s *Service) callTool(ctx context.Context, tenant switchboard.TenantID, id, remote string, args json.RawMessage) (*providers.ContentResult, error) {
	a, err := arguments(args)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		sess, err := s.session(ctx, tenant, id, 0)
		if err != nil {
			return nil, err
		}
		cs := &callStatus{}
		cctx, cancel := withCallClock(context.WithValue(ctx, callStatusKey{}, cs), s.timeout)
		req := mcpgo.CallToolRequest{}
		req.Params.Name = remote
		req.Params.Arguments = a
		if meta := telemetry.MetaWithTrace(ctx); meta != nil {
			req.Params.Meta = &mcpgo.Meta{AdditionalFields: meta} // the MCP convention: the server continues the trace
		}
		forget := func() {}
		if providers.WantsProgress(ctx) {
			// The caller asked for progress: so does the hub, with a token of its own
			// (the caller's may repeat across sessions), and relays what the server sends.
			token := "sb-" + switchboard.RandomToken(12)
			if req.Params.Meta == nil {
				req.Params.Meta = &mcpgo.Meta{}
			}
			req.Params.Meta.ProgressToken = token
			sess.progress.Store(token, func(done, total float64, message string) {
				providers.ReportProgress(ctx, done, total, message)
			})
			forget = func() { sess.progress.Delete(token) }
		}
		// The call's place goes to other calls while the server works on it, as a
		// built-in provider's does while its upstream answers.
		slot := limits.SlotFrom(ctx)
		if err := slot.Away(cctx, sess.host); err != nil {
			forget()
			cancel()
			return nil, err
		}
		res, err := sess.client.CallTool(cctx, req)
		slot.Resume()
		forget()
		cancel()
		if err != nil {
			if attempt == 0 && gone(err, cs) && ctx.Err() == nil {
				s.log.Info("remote MCP session gone; reconnecting", "connection", id, "err", err)
				s.drop(sess)
				continue
			}
			return nil, s.upstreamError(sess.name, "call "+remote+" on", err, cs)
		}
		// A resource the result names is read through the hub, under the hub's URI.
		for i, c := range res.Content {
			res.Content[i] = hubContent(sess.name, c)
		}
		out, err := ContentResult(res)
		if err != nil {
			return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("the remote MCP server %s answered %s with content the hub cannot read", sess.name, remote), Err: err}
		}
		if out.IsError {
			return nil, resultError(sess.name, remote, out)
		}
		return out, nil
	}
}

// toolsChanged re-reads a session's tools after the server said they changed, and
// tells the hub when they did (its MCP sessions get list_changed).
func (s *Service) toolsChanged(sess *session) {
	if sess.closed.Load() || sess.id == "" {
		return
	}
	before, _ := sess.toolList()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := s.listTools(ctx, sess); err != nil {
		s.log.Warn("re-list remote MCP tools", "connection", sess.id, "err", err)
		return
	}
	after, _ := sess.toolList()
	if !sameTools(before, after) {
		s.changed(sess.tenant, sess.id)
	}
}

// ConnectionChanged is told of every connection change (wire it to
// connections.Service.Subscribe): the session of a connection deleted or changed
// (reconnected, new credentials) is closed; an empty id (a gap in the change feed)
// checks every session. It does not block.
func (s *Service) ConnectionChanged(tenant switchboard.TenantID, id string) {
	if id == "" {
		s.mu.Lock()
		all := make([]*session, 0, len(s.sessions))
		for _, sess := range s.sessions {
			all = append(all, sess)
		}
		s.mu.Unlock()
		for _, sess := range all {
			s.ConnectionChanged(sess.tenant, sess.id)
		}
		return
	}
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	if sess == nil || sess.tenant != tenant {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := s.conns.Open(ctx, tenant, id)
		switch {
		case switchboard.CodeOf(err) == switchboard.CodeNotFound:
			s.drop(sess)
		case err != nil:
			s.log.Warn("read changed remote MCP connection", "connection", id, "err", err)
		case c.Version != sess.version || c.Status == connections.StatusRevoked:
			s.drop(sess)
		}
	}()
}

// SetFeed makes the service drop its session of a remote server whose tools another
// node saw change, so that the next list here is read afresh. Subscribe it before the
// connections service (connections.Service.SetFeed), whose subscribers re-list the
// tools. Call it once, while wiring.
func (s *Service) SetFeed(b events.Bus) {
	b.Subscribe(func(e events.Event) {
		if e.Kind != events.RemoteToolsChanged || e.Origin == b.Node() {
			return
		}
		s.mu.Lock()
		sess := s.sessions[e.ID]
		s.mu.Unlock()
		if sess != nil && sess.tenant == e.Tenant {
			s.drop(sess)
		}
	})
}

// Run closes idle sessions until ctx ends, then closes every session.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(max(s.idle/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Close()
			return
		case now := <-t.C:
			s.sweep(now)
		}
	}
}

// sweep closes the sessions unused since before now minus the idle timeout.
func (s *Service) sweep(now time.Time) {
	var idle []*session
	s.mu.Lock()
	for _, sess := range s.sessions {
		if now.Sub(time.Unix(0, sess.lastUsed.Load())) > s.idle {
			idle = append(idle, sess)
		}
	}
	s.mu.Unlock()
	for _, sess := range idle {
		s.drop(sess)
	}
}

// Close closes every session.
func (s *Service) Close() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, sess := range all {
		sess.close()
	}
}

// tokenFailure turns a failed token request into an error without the answer's body.
func tokenFailure(doing string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		code := switchboard.CodeUpstream
		if re.ErrorCode == "invalid_client" || re.ErrorCode == "invalid_grant" || re.ErrorCode == "unauthorized_client" || status == http.StatusUnauthorized {
			code = switchboard.CodeReconnect
		}
		msg := fmt.Sprintf("the authorization server refused to %s", doing)
		if re.ErrorCode != "" {
			msg += ": " + oauthCode(re.ErrorCode)
		}
		return &providers.UpstreamError{Provider: Provider, Status: status, Code: code, Reason: oauthCode(re.ErrorCode), Message: msg}
	}
	if r := refusal(err); r != nil {
		return r
	}
	return &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not reach the authorization server to %s; try again", doing), Err: err}
}

// oauthCode keeps an OAuth error code printable and short.
func oauthCode(code string) string {
	var b strings.Builder
	for _, r := range code {
		if b.Len() >= 64 {
			break
		}
		if r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
