package connections

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// exchangeTimeout bounds one call to a provider's token endpoint.
const exchangeTimeout = 30 * time.Second

// OAuthConfig configures the OAuth connect flow and the token lifecycle.
type OAuthConfig struct {
	// RedirectURL is the callback URL registered with every OAuth app: the public URL
	// followed by /oauth/callback. Providers compare it exactly.
	RedirectURL string
	// Apps are the deployment's OAuth apps by provider name; a tenant's own app for a
	// provider takes precedence (see SetOAuthApp).
	Apps map[string]OAuthApp
	// Logger receives failures of background work; nil is slog.Default.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Metrics, when set, counts token refreshes by outcome.
	Metrics *telemetry.Metrics
}

// ConfigureOAuth enables the OAuth connect flow and token refresh. Call it while
// wiring, before the service is used.
func (s *Service) ConfigureOAuth(cfg OAuthConfig) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Apps = maps.Clone(cfg.Apps)
	s.oauth = cfg
}

func (s *Service) now() time.Time {
	if s.oauth.Now != nil {
		return s.oauth.Now()
	}
	return time.Now()
}

func (s *Service) logger() *slog.Logger {
	if s.oauth.Logger != nil {
		return s.oauth.Logger
	}
	return slog.Default()
}

// AuthorizeInput starts an OAuth connect flow.
type AuthorizeInput struct {
	Provider string
	Shared   bool
	Label    *string // overrides the account label the provider reports
	// ConnectionID, when set, is the connection to reconnect in place (same id, so its
	// agents keep their tools): one of p's tenant of Provider that p may manage. The
	// account who signs in must be the connection's.
	ConnectionID string
}

// Authorization is a started flow: the URL to send the person to, and the cookie the
// browser must carry back to the callback.
type Authorization struct {
	URL          string
	CookieName   string
	CookieValue  string
	CookiePath   string
	CookieSecure bool
	ExpiresAt    time.Time
}

// OAuthCookieName is the name of the cookie that binds the flow of state to the
// browser that started it: one per flow, so two flows in one browser do not collide.
func OAuthCookieName(state string) string {
	return "sb_oauth_" + secretHash(state)[:16]
}

// Authorize starts connecting p's account at a provider with OAuth: it records a
// single-use state (its SHA-256 only) bound to p's user and to a new browser cookie,
// with a sealed PKCE verifier where the provider supports PKCE, and returns the
// provider's authorization URL.
func (s *Service) Authorize(ctx context.Context, p switchboard.Principal, in AuthorizeInput) (Authorization, error) {
	return s.authorize(ctx, p, in, flowOptions{})
}

// authorize starts a flow; a flow of a connect link (StartConnectLink) completes the
// link, and asks only the link's scopes when it names some.
func (s *Service) authorize(ctx context.Context, p switchboard.Principal, in AuthorizeInput, fo flowOptions) (Authorization, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Authorization{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	spec, err := s.oauthProvider(in.Provider)
	if err != nil {
		return Authorization{}, err
	}
	var label string
	if in.Label != nil {
		if label, err = cleanLabel(*in.Label); err != nil {
			return Authorization{}, err
		}
	}
	payload := statePayload{Shared: in.Shared, Label: label, LinkID: fo.linkID, AddScopes: fo.scopes}
	named := Connection{OwnerUserID: p.UserID, Provider: spec.Name, Shared: in.Shared}
	if in.ConnectionID != "" {
		existing, err := s.reconnectTarget(ctx, p, in.ConnectionID, spec.Name)
		if err != nil {
			return Authorization{}, err
		}
		payload.ConnectionID, payload.Shared = existing.ID, existing.Shared
		named = existing
	}
	if label != "" && label != named.AccountLabel {
		named.AccountLabel = label
		if err := s.checkLabel(ctx, p.TenantID, named); err != nil {
			return Authorization{}, err
		}
	}
	if s.oauth.RedirectURL == "" {
		return Authorization{}, switchboard.Internal(errors.New("authorize: no OAuth redirect URL is configured"))
	}
	app, endpoints, err := s.oauthApp(ctx, p.TenantID, spec)
	if err != nil {
		return Authorization{}, err
	}
	state := switchboard.RandomToken(32) // 256 bits
	browser := switchboard.RandomToken(32)
	now := s.now().UTC().Truncate(time.Microsecond)
	cfg := oauthConfig(app, endpoints, s.oauth.RedirectURL)
	var opts []oauth2.AuthCodeOption
	sep := endpoints.ScopeSeparator
	if sep == "" {
		sep = " "
	}
	switch {
	case len(fo.scopes) > 0:
		// Incremental authorization: only the missing scopes are asked, and the
		// provider is told to keep those granted before.
		opts = append(opts, oauth2.SetAuthURLParam("scope", strings.Join(fo.scopes, sep)), oauth2.SetAuthURLParam("include_granted_scopes", "true"))
	case len(endpoints.Scopes) > 0:
		opts = append(opts, oauth2.SetAuthURLParam("scope", strings.Join(endpoints.Scopes, sep)))
	}
	if len(endpoints.UserScopes) > 0 {
		opts = append(opts, oauth2.SetAuthURLParam("user_scope", strings.Join(endpoints.UserScopes, sep)))
	}
	for k, v := range endpoints.AuthParams {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	if endpoints.PKCE {
		payload.Verifier = oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(payload.Verifier))
	}
	row := &oauthStateRow{
		ID: secretHash(state), TenantID: p.TenantID, UserID: p.UserID, Provider: spec.Name, ClientID: app.ClientID,
		BrowserHash: secretHash(browser), RedirectURI: s.oauth.RedirectURL, ExpiresAt: now.Add(stateTTL), CreatedAt: now,
	}
	if err := s.store.createOAuthState(ctx, row, payload); err != nil {
		return Authorization{}, err
	}
	cookiePath := "/oauth/callback"
	secure := false
	if u, err := url.Parse(s.oauth.RedirectURL); err == nil {
		cookiePath = u.Path
		secure = u.Scheme == "https"
	}
	return Authorization{
		URL: cfg.AuthCodeURL(state, opts...), CookieName: OAuthCookieName(state), CookieValue: browser,
		CookiePath: cookiePath, CookieSecure: secure, ExpiresAt: row.ExpiresAt,
	}, nil
}

// CallbackInput is what the provider's redirect brought back, with the browser's
// cookie for the state and, when the request carried an API key, who sent it.
type CallbackInput struct {
	State            string
	Code             string
	Error            string // the provider's error, such as access_denied
	ErrorDescription string
	Browser          string // the value of the OAuthCookieName(State) cookie
	Principal        *switchboard.Principal
}

// Callback finishes a flow: the state must be known, unused and unexpired, and come
// back in the browser that started it (and from its user, when the request says who
// it is). The code is exchanged with the same redirect URI and PKCE verifier, the
// account's identity is fetched from the provider, and the connection is stored (or
// an existing connection of the same account and owner reconnected). Every failure
// stores nothing, and the state cannot be used again, except a refusal of the browser
// or the user: the state stays for the browser that started the flow.
func (s *Service) Callback(ctx context.Context, in CallbackInput) (Connection, error) {
	now := s.now()
	row, payload, err := s.store.consumeOAuthState(ctx, in.State, now, in.checkBrowser)
	if err != nil {
		if row.TenantID != "" {
			s.recordFlowFailure(row, err)
		}
		return Connection{}, err
	}
	conn, err := s.finish(ctx, row, payload, in)
	if err != nil {
		s.recordFlowFailure(row, err)
		return Connection{}, err
	}
	return conn, nil
}

// checkBrowser refuses a callback that did not come back in the browser that started
// the flow (its cookie), or that says it comes from another user. It runs before the
// state is consumed.
func (in CallbackInput) checkBrowser(row oauthStateRow) error {
	if in.Browser == "" || subtle.ConstantTimeCompare([]byte(secretHash(in.Browser)), []byte(row.BrowserHash)) != 1 {
		return switchboard.Errorf(switchboard.CodeForbidden, "this connect link was started in another browser or by another user: start connecting again from Switchboard in this browser")
	}
	if in.Principal != nil && (in.Principal.TenantID != row.TenantID || in.Principal.Kind != switchboard.PrincipalUser || in.Principal.UserID != row.UserID) {
		return switchboard.Errorf(switchboard.CodeForbidden, "this connect link was started by another user")
	}
	return nil
}

func (s *Service) finish(ctx context.Context, row oauthStateRow, payload statePayload, in CallbackInput) (Connection, error) {
	if x := s.connectionOAuth(row.Provider); x != nil {
		return s.finishExternal(ctx, x, row, payload, in)
	}
	spec, err := s.oauthProvider(row.Provider)
	if err != nil {
		return Connection{}, err
	}
	if in.Error != "" {
		if in.Error == "access_denied" {
			return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "access to your %s account was not granted, so nothing was connected", spec.Title)
		}
		return Connection{}, &switchboard.Error{Code: switchboard.CodeUpstream, Field: "error", Message: fmt.Sprintf("%s ended the authorization with %q, so nothing was connected", spec.Title, oauthErrorCode(in.Error))}
	}
	if in.Code == "" {
		return Connection{}, switchboard.Invalid("code", "is missing from the provider's redirect")
	}
	if row.RedirectURI != s.oauth.RedirectURL {
		return Connection{}, switchboard.Invalid("state", "was issued for another redirect URL: start connecting again")
	}
	app, endpoints, err := s.oauthApp(ctx, row.TenantID, spec)
	if err != nil {
		return Connection{}, err
	}
	if app.ClientID != row.ClientID {
		return Connection{}, switchboard.Invalid("state", "was issued for another OAuth app (the app changed meanwhile): start connecting again")
	}
	cfg := oauthConfig(app, endpoints, row.RedirectURI)
	var opts []oauth2.AuthCodeOption
	if payload.Verifier != "" {
		opts = append(opts, oauth2.VerifierOption(payload.Verifier))
	}
	xctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	tok, err := cfg.Exchange(s.tokenContext(xctx, spec), in.Code, opts...)
	if err != nil {
		return Connection{}, tokenError(spec, "exchange the authorization code", err)
	}
	acct, err := s.verify(ctx, row.TenantID, spec, tok.AccessToken)
	if err != nil {
		return Connection{}, err
	}
	meta := maps.Clone(acct.Meta)
	if endpoints.TokenMeta != nil {
		if meta == nil {
			meta = map[string]string{}
		}
		maps.Copy(meta, endpoints.TokenMeta(tok.Extra))
	}
	scopeList := acct.Scopes
	if len(scopeList) == 0 {
		if sc, _ := tok.Extra("scope").(string); sc != "" {
			scopeList = strings.FieldsFunc(sc, func(r rune) bool { return r == ',' || r == ' ' })
		}
	}
	if len(payload.AddScopes) > 0 && payload.ConnectionID != "" {
		// Scopes added to a connection keep those it had.
		if existing, err := s.store.Get(ctx, row.TenantID, payload.ConnectionID); err == nil {
			for _, sc := range strings.Fields(existing.Scopes) {
				if !slices.Contains(scopeList, sc) {
					scopeList = append(scopeList, sc)
				}
			}
		}
	}
	label := payload.Label
	if label == "" {
		label = acct.Label
	}
	if label == "" {
		label = spec.Title // the provider does not say whose account it is
	}
	creds := Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, ClientID: app.ClientID}
	p := switchboard.Principal{TenantID: row.TenantID, Kind: switchboard.PrincipalUser, UserID: row.UserID}
	conn := Connection{
		OwnerUserID: row.UserID, Provider: spec.Name, AuthKind: providers.AuthOAuth2, AccountID: acct.ID,
		AccountLabel: label, Scopes: scopes(scopeList), Meta: meta, Shared: payload.Shared, Status: StatusActive,
	}
	if payload.ConnectionID == "" || payload.Label != "" {
		checked := conn
		checked.ID = payload.ConnectionID
		if err := s.checkLabel(ctx, row.TenantID, checked); err != nil {
			return Connection{}, err
		}
	}
	var c Connection
	reconnected := true
	if payload.ConnectionID != "" {
		c, err = s.reconnectOAuth(ctx, row.TenantID, payload, spec, acct, conn, creds)
	} else {
		c, reconnected, err = s.store.connectOAuth(ctx, row.TenantID, conn, creds, payload.Label != "")
	}
	if err != nil {
		return Connection{}, err
	}
	if reconnected {
		s.record(p, audit.KindConnectionReconnected, c.ID, "", spec.Name+" "+c.AccountLabel+" (oauth)")
	} else {
		s.record(p, audit.KindConnectionCreated, c.ID, "", spec.Name+" "+c.AccountLabel+" (oauth)")
	}
	kind := events.ConnectionAdded
	if reconnected {
		kind = events.ConnectionChanged
	}
	if payload.LinkID != "" {
		if err := s.store.completeConnectLink(ctx, row.TenantID, payload.LinkID, c.ID, s.now()); err != nil {
			return Connection{}, err
		}
	}
	s.notify(ctx, kind, row.TenantID, c.ID)
	return c, nil
}

// reconnectOAuth renews the connection the flow was started to reconnect, in place,
// when it still exists, is still of the provider and the account signed in is its own.
func (s *Service) reconnectOAuth(ctx context.Context, tenant switchboard.TenantID, payload statePayload, spec *providers.Spec, acct providers.Account, conn Connection, creds Credentials) (Connection, error) {
	existing, err := s.store.Get(ctx, tenant, payload.ConnectionID)
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return Connection{}, switchboard.Errorf(switchboard.CodeNotFound, "the %s connection being reconnected was deleted meanwhile; connect the account again", spec.Title)
	}
	if err != nil {
		return Connection{}, err
	}
	if existing.Provider != spec.Name {
		return Connection{}, switchboard.Invalid("connection_id", fmt.Sprintf("is a %s connection, not %s", existing.Provider, spec.Name))
	}
	if err := sameAccount(spec, existing, acct, "account"); err != nil {
		return Connection{}, err
	}
	if payload.Label == "" {
		conn.AccountLabel = existing.AccountLabel
	}
	return s.store.renew(ctx, tenant, existing, conn, creds)
}

// recordFlowFailure audits a flow that ended without a connection: never the code or
// state, only why.
func (s *Service) recordFlowFailure(row oauthStateRow, err error) {
	p := switchboard.Principal{TenantID: row.TenantID, Kind: switchboard.PrincipalUser, UserID: row.UserID}
	msg := err.Error()
	if e := switchboard.AsError(err); e != nil {
		msg = e.Message
		if e.Field != "" {
			msg = e.Field + ": " + msg
		}
	}
	if len(msg) > 400 {
		msg = msg[:400]
	}
	s.record(p, audit.KindOAuthConnectFailed, "", switchboard.CodeOf(err), row.Provider+": "+msg)
}

// oauthConfig is the x/oauth2 configuration of one app at one provider. The client
// authenticates with client_secret_post, which Slack and GitHub both accept, or with
// HTTP Basic auth where the provider asks for it (Notion), so one token request is
// sent per exchange or refresh.
func oauthConfig(app OAuthApp, endpoints providers.OAuth2, redirect string) *oauth2.Config {
	style := oauth2.AuthStyleInParams
	if endpoints.BasicAuth {
		style = oauth2.AuthStyleInHeader
	}
	return &oauth2.Config{
		ClientID:     app.ClientID,
		ClientSecret: app.ClientSecret,
		RedirectURL:  redirect,
		Endpoint:     oauth2.Endpoint{AuthURL: endpoints.AuthURL, TokenURL: endpoints.TokenURL, AuthStyle: style},
	}
}

// tokenContext carries the HTTP client x/oauth2 uses for the provider's token
// endpoint: the provider's shared transport, with its answers rewritten into the
// standard shape where the provider needs it. A token endpoint's redirect is not
// followed: the request carries the app's secret and a code or a refresh token.
func (s *Service) tokenContext(ctx context.Context, spec *providers.Spec) context.Context {
	var rt http.RoundTripper = s.tr.For(spec.Name)
	if spec.OAuth != nil && spec.OAuth.TokenResponse != nil {
		rt = &tokenRewriter{next: rt, rewrite: spec.OAuth.TokenResponse}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, egress.Client(rt, exchangeTimeout, false))
}

// tokenRewriter passes JSON answers of a token endpoint through the provider's
// TokenResponse.
type tokenRewriter struct {
	next    http.RoundTripper
	rewrite func([]byte) ([]byte, error)
}

func (t *tokenRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read token answer: %w", err)
	}
	out, err := t.rewrite(body)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// oauthErrorCode keeps an OAuth error code printable and short: it is shown to people
// and audited, and comes from a redirect anyone could forge.
func oauthErrorCode(code string) string {
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

// tokenError turns a failed call to a token endpoint into an error a person can act
// on, with the provider's error code and description but never the answer's body.
func tokenError(spec *providers.Spec, doing string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := oauthErrorCode(re.ErrorCode)
		msg := fmt.Sprintf("%s refused to %s", spec.Title, doing)
		if code != "" {
			msg += ": " + code
		}
		if d := re.ErrorDescription; d != "" && len(d) < 200 {
			msg += " (" + d + ")"
		}
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		c := switchboard.CodeUpstream
		switch {
		case code == "invalid_grant", code == "bad_verification_code", code == "invalid_code", code == "code_already_used", code == "invalid_refresh_token":
			c = switchboard.CodeInvalid
		case status == http.StatusTooManyRequests:
			c = switchboard.CodeRateLimited
		}
		return &switchboard.Error{Code: c, Field: fieldFor(c), Message: msg, Err: fmt.Errorf("%s: %s %d %s", doing, spec.Name, status, code)}
	}
	return &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not reach %s to %s; try again", spec.Title, doing), Err: fmt.Errorf("%s: %w", doing, redactURLError(err))}
}

func fieldFor(c switchboard.Code) string {
	if c == switchboard.CodeInvalid {
		return "code"
	}
	return ""
}

// redactURLError keeps a transport error's cause without the request (whose body may
// hold a code or refresh token; the URL holds neither).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, ue.URL, ue.Err)
	}
	return err
}
