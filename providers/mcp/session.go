package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/providers"
)

// session is the live MCP client session of one connection: initialized once, with the
// server's tools cached until the server says they changed.
type session struct {
	tenant  switchboard.TenantID
	id      string // connection id
	version int64  // the connection's version the session was opened with
	name    string // the server's name, the tools' prefix
	host    string // the server's host, where its calls wait (limits.Slot.Away)
	client  *client.Client
	cancel  context.CancelFunc // ends the session's streams

	caps mcpgo.ServerCapabilities // what the server announced when the session opened

	mu      sync.Mutex
	tools   []*providers.Tool
	remote  map[string]string // hub tool name -> the server's
	content *content          // its prompts and resources, read on first use (content.go)

	// progress maps the progress token of each call in flight that asked for progress
	// to where its server's notifications/progress go.
	progress sync.Map // string -> func(done, total float64, message string)

	lastUsed atomic.Int64 // unix nanoseconds
	lost     atomic.Bool  // the server dropped the stream (SSE)
	closed   atomic.Bool
}

// relayProgress hands a notifications/progress of the server to the call that asked
// for it, by its token; other tokens are ignored.
func (s *session) relayProgress(params map[string]any) {
	token, ok := params["progressToken"].(string)
	if !ok {
		return
	}
	fn, ok := s.progress.Load(token)
	if !ok {
		return
	}
	done, _ := params["progress"].(float64)
	total, _ := params["total"].(float64)
	message, _ := params["message"].(string)
	fn.(func(done, total float64, message string))(done, total, message)
}

func (s *session) touch() { s.lastUsed.Store(time.Now().UnixNano()) }

func (s *session) toolList() ([]*providers.Tool, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools, s.remote
}

func (s *session) close() {
	if s.closed.Swap(true) {
		return
	}
	_ = s.client.Close()
	s.cancel()
}

// callStatus receives the HTTP status and Retry-After of the responses to one call's
// requests, so a failure says what the server answered.
type callStatus struct {
	status     atomic.Int32
	retryAfter atomic.Int64 // nanoseconds
}

type callStatusKey struct{}

// httpTransport authenticates every request of a session to the server's registered
// origin (the token is taken per request, so an OAuth token refreshes when it
// expires), and no request to any other origin: a redirect elsewhere, or an SSE
// message endpoint on another host, gets no credential. It notes each response's
// status for the call it belongs to, and taps a call's SSE response for the server's
// log messages, which go to the calling client (logTap).
type httpTransport struct {
	next   http.RoundTripper
	origin *url.URL                                  // the registered server's URL
	token  func(ctx context.Context) (string, error) // nil: no credential
}

func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req
	if !egress.SameOrigin(req.URL, t.origin) {
		if req.Header.Get("Authorization") != "" {
			r = req.Clone(req.Context())
			r.Header.Del("Authorization")
		}
	} else if t.token != nil {
		tok, err := t.token(req.Context())
		if err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
		r = req.Clone(req.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if r.Header.Get("User-Agent") == "" {
		if r == req {
			r = req.Clone(req.Context())
		}
		r.Header.Set("User-Agent", "Switchboard/1.0")
	}
	resp, err := t.next.RoundTrip(r)
	if resp != nil && resp.Body != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if c := providers.CallerFrom(req.Context()); c != nil {
			resp.Body = &logTap{ReadCloser: resp.Body, caller: c}
		}
	}
	if resp != nil {
		if cs, ok := req.Context().Value(callStatusKey{}).(*callStatus); ok {
			cs.status.Store(int32(resp.StatusCode))
			if wait, ok := providers.RateLimitWait(resp.Header, time.Now()); ok && resp.StatusCode == http.StatusTooManyRequests {
				cs.retryAfter.Store(int64(wait)) // seconds or an HTTP date
			}
		}
	}
	return resp, err
}

// endpoint is what a session needs to reach a server: where, how, and its credential.
type endpoint struct {
	name      string
	url       string
	transport string
	token     func(ctx context.Context) (string, error)
	// The connection the session belongs to (none while a registration checks it).
	tenant  switchboard.TenantID
	id      string
	version int64
}

// endpointOf builds a connection's endpoint from its record and credentials.
func (s *Service) endpointOf(c connections.Connection, creds connections.Credentials) (endpoint, error) {
	ep := endpoint{name: c.Meta[metaName], url: c.Meta[metaURL], transport: c.Meta[metaTransport], tenant: c.TenantID, id: c.ID, version: c.Version}
	if ep.url == "" || ep.name == "" {
		return endpoint{}, fmt.Errorf("connection %s has no remote MCP server url or name", c.ID)
	}
	switch c.Meta[metaAuth] {
	case AuthBearer:
		token := creds.AccessToken
		ep.token = func(context.Context) (string, error) { return token, nil }
	case AuthClientCredentials:
		ep.token = s.clientCredentials(c.Meta[metaTokenURL], creds.ClientID, creds.ClientSecret, strings.Fields(c.Scopes), c.Meta[metaAuthMethod])
	case AuthOAuth:
		ts := s.conns.TokenSource(c, creds)
		ep.token = func(ctx context.Context) (string, error) {
			var tok *oauth2.Token
			var err error
			if cts, ok := ts.(providers.ContextTokenSource); ok {
				tok, err = cts.TokenContext(ctx)
			} else {
				tok, err = ts.Token()
			}
			if err != nil {
				return "", err
			}
			return tok.AccessToken, nil
		}
	}
	return ep, nil
}

// clientCredentials returns a token function that gets (and reuses until it expires)
// a token of the client_credentials grant. The token lives in memory only: the client's
// secret, sealed in the connection, gets a new one whenever needed.
func (s *Service) clientCredentials(tokenURL, clientID, secret string, scopes []string, method string) func(ctx context.Context) (string, error) {
	style := oauth2.AuthStyleInHeader
	if method == "client_secret_post" {
		style = oauth2.AuthStyleInParams
	}
	cfg := &clientcredentials.Config{ClientID: clientID, ClientSecret: secret, TokenURL: tokenURL, Scopes: scopes, AuthStyle: style}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.oauthHTTP)
	ts := oauth2.ReuseTokenSource(nil, cfg.TokenSource(ctx))
	return func(context.Context) (string, error) {
		tok, err := ts.Token()
		if err != nil {
			return "", tokenFailure("get a token with the client credentials", err)
		}
		return tok.AccessToken, nil
	}
}

// dial opens and initializes a session to an endpoint and lists its tools.
func (s *Service) dial(ctx context.Context, ep endpoint, onToolsChanged func(*session)) (*session, error) {
	origin, err := url.Parse(ep.url)
	if err != nil {
		return nil, switchboard.Invalid("url", "is not a URL")
	}
	hc := &http.Client{Transport: &httpTransport{next: s.transport, origin: origin, token: ep.token}}
	var c *client.Client
	var patient *patientTransport
	switch ep.transport {
	case TransportSSE:
		tr, err := transport.NewSSE(ep.url, transport.WithHTTPClient(hc))
		if err != nil {
			return nil, switchboard.Invalid("url", err.Error())
		}
		c = client.NewClient(tr, client.WithElicitationHandler(relay{}), client.WithSamplingHandler(relay{}), client.WithRootsHandler(relay{}))
	default:
		tr, err := transport.NewStreamableHTTP(ep.url, transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(s.log))
		if err != nil {
			return nil, switchboard.Invalid("url", err.Error())
		}
		patient = &patientTransport{StreamableHTTP: tr}
		c = client.NewClient(patient, client.WithElicitationHandler(relay{}), client.WithSamplingHandler(relay{}), client.WithRootsHandler(relay{}))
	}
	sctx, cancel := context.WithCancel(context.Background())
	sess := &session{name: ep.name, host: origin.Host, client: c, cancel: cancel, tenant: ep.tenant, id: ep.id, version: ep.version}
	if patient != nil {
		patient.post = func(ctx context.Context, body []byte) error { return postMessage(ctx, sess, hc, ep.url, body) }
	}
	sess.touch()
	handle := func(n mcpgo.JSONRPCNotification) {
		if n.Method == string(mcpgo.MethodNotificationToolsListChanged) && onToolsChanged != nil {
			go onToolsChanged(sess)
		}
		if (n.Method == string(mcpgo.MethodNotificationPromptsListChanged) || n.Method == string(mcpgo.MethodNotificationResourcesListChanged)) && onToolsChanged != nil {
			go s.contentChanged(sess)
		}
		if n.Method == string(mcpgo.MethodNotificationProgress) {
			sess.relayProgress(n.Params.AdditionalFields)
		}
		if n.Method == string(mcpgo.MethodNotificationResourceUpdated) {
			s.resourceUpdated(sess, n)
		}
	}
	c.OnNotification(handle)
	c.OnConnectionLost(func(error) { sess.lost.Store(true) })
	fail := func(err error) (*session, error) {
		sess.close()
		return nil, err
	}
	cs := &callStatus{}
	ictx, icancel := context.WithTimeout(context.WithValue(ctx, callStatusKey{}, cs), s.timeout)
	defer icancel()
	if err := c.Start(sctx); err != nil {
		return fail(s.upstreamError(ep.name, "connect to", err, cs))
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "switchboard", Version: s.version}
	// The newest version of the initialize handshake: mcp-go's probe for 2026-07-28
	// (server/discover) is answered by servers of the official Go SDK v1.8.0, which
	// then refuse every request of that version.
	req.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
	init, err := c.Initialize(ictx, req)
	if err != nil {
		return fail(s.upstreamError(ep.name, "initialize a session with", err, cs))
	}
	sess.caps = init.Capabilities
	if init.Capabilities.Logging != nil {
		// Every level: the hub sends each caller what its own session's level asks for.
		// Servers of the official SDKs send no log message until a level is set.
		lreq := mcpgo.SetLevelRequest{}
		lreq.Params.Level = mcpgo.LoggingLevelDebug
		if err := c.SetLevel(ictx, lreq); err != nil {
			s.log.Debug("set the remote MCP server's log level", "server", ep.name, "err", err)
		}
	}
	if err := s.listTools(ictx, sess); err != nil {
		return fail(s.upstreamError(ep.name, "list the tools of", err, cs))
	}
	if onToolsChanged != nil && ep.transport != TransportSSE {
		go s.listen(sctx, sess, hc, ep.url, handle)
	}
	return sess, nil
}

// listTools reads the server's tools into the session.
func (s *Service) listTools(ctx context.Context, sess *session) error {
	res, err := sess.client.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return err
	}
	tools, remote := s.hubTools(sess.name, res.Tools)
	sess.mu.Lock()
	sess.tools, sess.remote = tools, remote
	sess.mu.Unlock()
	return nil
}

// gone reports whether an error says the session is over and a new one may be tried
// without the request having run: the server forgot the session (it restarted: 404, or
// the TypeScript SDK's 400 "No valid session ID provided"), or nothing answers at its
// address any more.
func gone(err error, cs *callStatus) bool {
	if errors.Is(err, transport.ErrSessionTerminated) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	if st := cs.status.Load(); (st == http.StatusBadRequest || st == http.StatusNotFound) && strings.Contains(strings.ToLower(err.Error()), "session") {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// upstreamError turns a failure talking to a server into an error a caller can act on,
// naming the server and never a credential.
func (s *Service) upstreamError(server, doing string, err error, cs *callStatus) error {
	if r := refusal(err); r != nil {
		return r
	}
	var se *switchboard.Error
	if errors.As(err, &se) {
		return se
	}
	var ue *providers.UpstreamError
	if errors.As(err, &ue) {
		return ue
	}
	status := int(cs.status.Load())
	var authErr *transport.AuthorizationRequiredError
	if errors.As(err, &authErr) || status == http.StatusUnauthorized {
		status = http.StatusUnauthorized
		return &providers.UpstreamError{Provider: Provider, Status: status, Code: switchboard.CodeReconnect, Reason: "unauthorized",
			Message: fmt.Sprintf("the remote MCP server %s refused our credentials; reconnect it", server)}
	}
	switch {
	case status == http.StatusForbidden:
		return &providers.UpstreamError{Provider: Provider, Status: status, Code: switchboard.CodeForbidden, Reason: "forbidden",
			Message: fmt.Sprintf("the remote MCP server %s forbids this", server)}
	case status == http.StatusTooManyRequests:
		return &providers.UpstreamError{Provider: Provider, Status: status, Code: switchboard.CodeRateLimited, Reason: "rate_limited",
			Message: fmt.Sprintf("the remote MCP server %s is rate limiting us", server), RetryAfter: time.Duration(cs.retryAfter.Load())}
	case status >= 500:
		return &providers.UpstreamError{Provider: Provider, Status: status, Code: switchboard.CodeUpstream, Reason: "server_error",
			Message: fmt.Sprintf("the remote MCP server %s failed (HTTP %d); retrying later may help", server, status)}
	}
	if u := s.unreachable(server, doing, err); u != nil {
		return u
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not %s the remote MCP server %s: %s", doing, server, msg), Err: err}
}

// arguments decodes a call's arguments for the client (an object, or none).
func arguments(args json.RawMessage) (any, error) {
	if len(args) == 0 || string(args) == "null" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, switchboard.Invalid("arguments", "must be a JSON object")
	}
	return m, nil
}
