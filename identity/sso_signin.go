package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

// Single sign-on for people: the sign-in page sends the browser to SSOStartPath with
// the workspace; the tenant's identity provider sends it back to SSOCallbackPath.
const (
	SSOStartPath    = "/signin/sso"
	SSOCallbackPath = "/signin/sso/callback"
	// ssoCookie binds a sign-in under way to the browser that started it: it holds the
	// state, which the callback must bring back unchanged.
	ssoCookie = "switchboard_sso"
	// ssoLoginLifetime is how long a person has at their identity provider.
	ssoLoginLifetime = 10 * time.Minute
	// discoveryLifetime is how long an issuer's discovery document and keys are reused.
	discoveryLifetime = time.Hour
)

// ssoStartRate is how many single sign-ons one client address may start: 60 at once
// (an office arriving in the morning), then one a second.
var ssoStartRate = limits.Rate{PerSecond: 1, Burst: 60}

// ssoLogin is a row of sso_logins: a sign-in under way.
type ssoLogin struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	StateHash string               `gorm:"size:64;not null"`
	Nonce     string               `gorm:"size:64;not null"`
	Sealed    []byte               `gorm:"not null"`
	KeyID     string               `gorm:"size:128;not null"`
	Next      string               `gorm:"size:2048;not null"`
	// LinkUserID is the user whose account this links to the identity provider, or
	// "" for a sign-in.
	LinkUserID string    `gorm:"size:40;not null"`
	CreatedAt  time.Time `gorm:"not null"`
	ExpiresAt  time.Time `gorm:"not null"`
}

func (ssoLogin) TableName() string { return "sso_logins" }

// ssoLoginAAD binds a sealed PKCE verifier to its sign-in.
func ssoLoginAAD(tenant switchboard.TenantID, id string) []byte {
	return []byte("switchboard/sso-login/v1\x00" + string(tenant) + "\x00" + id)
}

// providers caches OpenID providers (discovery document and key set) by issuer.
type providers struct {
	mu sync.Mutex
	m  map[string]cachedProvider
}

type cachedProvider struct {
	p       *oidc.Provider
	expires time.Time
}

// oidcContext carries the HTTP client the OpenID provider is reached with: its
// discovery, keys and token endpoint, whose credentials never follow a redirect to
// another origin.
func (s *Server) oidcContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, oidcClient(s.oidcTransport()))
}

// oidcClient is the HTTP client an OpenID provider is reached with, through rt.
func oidcClient(rt http.RoundTripper) *http.Client {
	return egress.Client(rt, 15*time.Second, true)
}

// oidcTransport is how the tenants' OpenID providers are reached.
func (s *Server) oidcTransport() http.RoundTripper {
	if s.o.OIDCTransport == nil {
		return http.DefaultTransport
	}
	return s.o.OIDCTransport
}

// discoveryError is a failed OpenID discovery. Public is all a person is shown: that
// the document could not be fetched, and the HTTP status if one came; never the dial
// error, the address it resolved to or the answer's body, which would make the issuer
// field a port scanner of the hub's network. Error, with all of those, is for the
// server log.
type discoveryError struct {
	Public string
	err    error
}

func (e *discoveryError) Error() string { return e.Public + ": " + e.err.Error() }
func (e *discoveryError) Unwrap() error { return e.err }

// statusRecorder keeps the status of the last answer its transport got.
type statusRecorder struct {
	rt     http.RoundTripper
	status atomic.Int32
}

func (s *statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.rt.RoundTrip(r)
	if err == nil {
		s.status.Store(int32(res.StatusCode))
	}
	return res, err
}

// discover returns the issuer's OpenID provider, from the cache when recent. Its
// error is a *discoveryError.
func (s *Server) discover(ctx context.Context, issuer string) (*oidc.Provider, error) {
	now := s.now()
	s.oidc.mu.Lock()
	c, ok := s.oidc.m[issuer]
	s.oidc.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.p, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// The key set is fetched later, when a token is verified, with the context given
	// here: one that outlives this request.
	rec := &statusRecorder{rt: s.oidcTransport()}
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), oidcClient(rec)), issuer)
	if err != nil {
		msg := err.Error()
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		public := fmt.Sprintf("the issuer's OpenID discovery document (%s/.well-known/openid-configuration) could not be fetched", strings.TrimSuffix(issuer, "/"))
		switch status := rec.status.Load(); {
		case status == http.StatusOK:
			public += ": it is not a discovery document of this issuer"
		case status != 0:
			public += fmt.Sprintf(": HTTP %d", status)
		}
		return nil, &discoveryError{Public: public, err: errors.New(msg)}
	}
	s.oidc.mu.Lock()
	if s.oidc.m == nil {
		s.oidc.m = map[string]cachedProvider{}
	}
	s.oidc.m[issuer] = cachedProvider{p: p, expires: now.Add(discoveryLifetime)}
	s.oidc.mu.Unlock()
	return p, nil
}

func (s *Server) oauth2Config(p *oidc.Provider, c *ssoConfig, secret string) *oauth2.Config {
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: secret, Endpoint: p.Endpoint(),
		RedirectURL: s.o.PublicURL + SSOCallbackPath, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// safeNext keeps a post-sign-in destination on this site (as the web package does).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "/"
		}
	}
	return next
}

// StartSSO starts a person's single sign-on to the workspace the form or query names
// (workspace, and next: where to go afterwards): it sends the browser to the tenant's
// identity provider with a state bound to this browser, a nonce and a PKCE challenge.
func (s *Server) StartSSO(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "start single sign-on with GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if !s.mayStartSSO(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	ctx := r.Context()
	slug := strings.TrimSpace(r.FormValue("workspace"))
	next := safeNext(r.FormValue("next"))
	if slug == "" || s.o.Accounts == nil {
		s.renderSSOError(w, r, http.StatusBadRequest, "", "Enter your workspace's name on the sign-in page, then choose Continue with single sign-on.")
		return
	}
	// An unknown workspace answers like one without single sign-on: the page does not
	// tell which workspaces exist.
	noSSO := fmt.Sprintf("Workspace %q has no single sign-on. Check its name, sign in with your password, or ask an owner to set single sign-on up in Settings.", slug)
	t, err := s.o.Accounts.TenantBySlug(ctx, slug)
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		s.renderSSOError(w, r, http.StatusNotFound, "", noSSO)
		return
	}
	if err != nil {
		s.ssoInternal(w, r, "", "find workspace", err)
		return
	}
	c, err := s.ssoConfigOf(ctx, t.ID)
	if err != nil {
		s.ssoInternal(w, r, "", "read single sign-on", err)
		return
	}
	if c == nil {
		s.renderSSOError(w, r, http.StatusNotFound, "", noSSO)
		return
	}
	s.sendToProvider(w, r, t, c, next, "")
}

// sendToProvider sends the browser to the tenant's identity provider with a state
// bound to this browser, a nonce and a PKCE challenge, for a sign-in, or for linking
// the account of linkUser (a user of t) when not empty.
func (s *Server) sendToProvider(w http.ResponseWriter, r *http.Request, t tenants.Tenant, c *ssoConfig, next, linkUser string) {
	ctx := r.Context()
	p, err := s.discover(ctx, c.Issuer)
	if err != nil {
		s.o.Logger.WarnContext(ctx, "single sign-on: discovery", "tenant", t.ID, "err", err)
		s.renderSSOError(w, r, http.StatusBadGateway, t.Slug, "Your identity provider does not answer. Try again in a moment; if it persists, an owner can check Settings, Single sign-on.")
		return
	}
	state, nonce, verifier := switchboard.RandomToken(32), switchboard.RandomToken(32), oauth2.GenerateVerifier()
	now := s.now().UTC().Truncate(time.Microsecond)
	login := ssoLogin{ID: switchboard.NewID("ssl"), TenantID: t.ID, StateHash: hashSecret(state), Nonce: nonce, Next: next,
		LinkUserID: linkUser, CreatedAt: now, ExpiresAt: now.Add(ssoLoginLifetime)}
	if login.Sealed, login.KeyID, err = s.o.Keyring.Seal(ctx, []byte(verifier), ssoLoginAAD(t.ID, login.ID)); err != nil {
		s.ssoInternal(w, r, t.Slug, "seal PKCE verifier", err)
		return
	}
	if err := s.o.DB.WithContext(ctx).Create(&login).Error; err != nil {
		s.ssoInternal(w, r, t.Slug, "store sign-in", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: state, Path: SSOCallbackPath, HttpOnly: true, Secure: s.secure(),
		SameSite: http.SameSiteLaxMode, MaxAge: int(ssoLoginLifetime.Seconds())})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.oauth2Config(p, c, "").AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusSeeOther)
}

// mayStartSSO takes one of the single sign-ons the client address may start, or
// answers 429 and returns false. Each start stores a sign-in under way: they are
// limited per client address, in the same shared limits as client registrations.
func (s *Server) mayStartSSO(w http.ResponseWriter, r *http.Request) bool {
	wait, ok := s.regLimit.Take(r.Context(), "sso-start:"+registrationSource(r), s.ssoRate, 0)
	if ok {
		return true
	}
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", fmt.Sprint(secs))
	s.renderSSOError(w, r, http.StatusTooManyRequests, "", fmt.Sprintf("Too many sign-ins were started from your network. Try again in %d s.", secs))
	return false
}

func (s *Server) secure() bool { return strings.HasPrefix(s.o.PublicURL, "https://") }

// takeLogin finds the sign-in a state belongs to and uses it up: a state works once,
// within its lifetime.
func (s *Server) takeLogin(ctx context.Context, state string) (*ssoLogin, error) {
	var l ssoLogin
	err := s.o.DB.WithContext(ctx).Where("state_hash = ?", hashSecret(state)).Take(&l).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	res := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ?", l.TenantID, l.ID).Delete(&ssoLogin{})
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected != 1 || !s.now().Before(l.ExpiresAt) {
		return nil, nil // a concurrent callback won, or it is too late
	}
	return &l, nil
}

// ssoClaims are the ID token claims sign-in reads.
type ssoClaims struct {
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
}

// SSOCallback finishes a single sign-on: the state must be the one this browser
// started with (and unused), the code is exchanged with the PKCE verifier, and the ID
// token must be signed by the issuer's keys, for this client, unexpired, with the
// sign-in's nonce and a verified email. The person is then signed in: a member of the
// tenant, an owner or an admin whose account is linked to the asserted subject, a
// pending invitation, or a new member when the email's domain is allowed. A link under
// way (LinkSSO) links the subject to the person instead, and signs nobody in.
func (s *Server) SSOCallback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "the identity provider comes back with GET", http.StatusMethodNotAllowed)
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	http.SetCookie(w, &http.Cookie{Name: ssoCookie, Value: "", Path: SSOCallbackPath, HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode, MaxAge: -1})
	startAgain := "This sign-in did not start in this browser, was already used, or took longer than 10 minutes. Start again from the sign-in page."
	c, err := r.Cookie(ssoCookie)
	if state == "" || err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		s.renderSSOError(w, r, http.StatusBadRequest, "", startAgain)
		return
	}
	login, err := s.takeLogin(ctx, state)
	if err != nil {
		s.ssoInternal(w, r, "", "find sign-in", err)
		return
	}
	if login == nil {
		s.renderSSOError(w, r, http.StatusBadRequest, "", startAgain)
		return
	}
	t, err := s.o.Accounts.Tenant(ctx, login.TenantID)
	if err != nil {
		s.ssoInternal(w, r, "", "find workspace", err)
		return
	}
	refuse := func(status int, why, email string) {
		principal := "sso"
		if email != "" {
			principal = "sso:" + email
		}
		s.record(audit.Event{TenantID: t.ID, Kind: audit.KindSSOSignIn, Principal: principal, Outcome: "forbidden", Detail: truncate("single sign-on refused: "+why, 500)})
		s.renderSSOError(w, r, status, t.Slug, why)
	}
	if e := q.Get("error"); e != "" {
		refuse(http.StatusForbidden, "your identity provider did not sign you in ("+truncate(e+" "+q.Get("error_description"), 200)+").", "")
		return
	}
	c2, err := s.ssoConfigOf(ctx, t.ID)
	if err != nil {
		s.ssoInternal(w, r, t.Slug, "read single sign-on", err)
		return
	}
	if c2 == nil {
		s.renderSSOError(w, r, http.StatusNotFound, t.Slug, "Single sign-on was turned off for this workspace while you were signing in.")
		return
	}
	p, err := s.discover(ctx, c2.Issuer)
	if err != nil {
		s.o.Logger.WarnContext(ctx, "single sign-on: discovery", "tenant", t.ID, "err", err)
		s.renderSSOError(w, r, http.StatusBadGateway, t.Slug, "Your identity provider does not answer. Try again in a moment.")
		return
	}
	verifier, err := s.o.Keyring.Open(ctx, login.KeyID, login.Sealed, ssoLoginAAD(t.ID, login.ID))
	if err != nil {
		s.ssoInternal(w, r, t.Slug, "open PKCE verifier", err)
		return
	}
	secret, err := s.o.Keyring.Open(ctx, c2.KeyID, c2.Sealed, ssoSecretAAD(t.ID))
	if err != nil {
		s.ssoInternal(w, r, t.Slug, "open client secret", err)
		return
	}
	tok, err := s.oauth2Config(p, c2, string(secret)).Exchange(s.oidcContext(ctx), q.Get("code"), oauth2.VerifierOption(string(verifier)))
	clear(secret)
	if err != nil {
		s.o.Logger.WarnContext(ctx, "single sign-on: code exchange", "tenant", t.ID, "err", err)
		refuse(http.StatusBadGateway, "your identity provider did not accept the sign-in code; start again from the sign-in page, and if it persists, an owner can check the client ID and secret in Settings.", "")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		refuse(http.StatusBadGateway, "your identity provider answered without an ID token (is it an OpenID Connect provider?).", "")
		return
	}
	// The provider's key set (cached with it, fetched again for a key id it has not
	// seen) checks the signature; the config the audience, and the expiry on our clock.
	idt, err := p.Verifier(&oidc.Config{ClientID: c2.ClientID, Now: s.now}).Verify(ctx, raw)
	if err != nil {
		refuse(http.StatusForbidden, "the ID token from your identity provider is not valid here: "+truncate(strings.TrimPrefix(err.Error(), "oidc: "), 200)+".", "")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(login.Nonce)) != 1 {
		refuse(http.StatusForbidden, "the ID token from your identity provider was not made for this sign-in (its nonce differs). Start again from the sign-in page.", "")
		return
	}
	var claims ssoClaims
	if err := idt.Claims(&claims); err != nil || claims.Email == "" {
		refuse(http.StatusForbidden, "your identity provider did not tell Switchboard your email address; an admin of the provider lets Switchboard's client read it (the email scope).", "")
		return
	}
	email := strings.ToLower(strings.TrimSpace(claims.Email))
	if claims.EmailVerified == nil || !*claims.EmailVerified {
		refuse(http.StatusForbidden, "your identity provider has not verified your email address "+email+", so Switchboard cannot rely on it.", email)
		return
	}
	if login.LinkUserID != "" {
		s.finishLink(w, r, t, c2, login, idt.Subject, email)
		return
	}
	_, domain, _ := strings.Cut(email, "@")
	joined, err := s.o.Accounts.SignInSSO(ctx, t.ID, email, containsFold(c2.domains(), domain), s.admitSSO(ctx, c2, idt.Subject, email))
	if err != nil {
		var unlinked *unlinkedError
		if errors.As(err, &unlinked) {
			refuse(http.StatusForbidden, unlinked.page(t.Slug), email)
			return
		}
		if e := switchboard.AsError(err); e.Code == switchboard.CodeForbidden || e.Code == switchboard.CodeInvalid {
			refuse(http.StatusForbidden, fmt.Sprintf("%s is not a member of workspace %s, and people of %s may not join it by signing in. Ask an admin of %s to invite you, or an owner to allow %s in Settings, Single sign-on.",
				email, t.Slug, domain, t.Slug, domain), email)
			return
		}
		s.ssoInternal(w, r, t.Slug, "sign in", err)
		return
	}
	detail := "signed in with single sign-on (" + c2.Issuer + ")"
	if joined.JoinedBy != "" {
		detail += fmt.Sprintf("; joined as %s by %s", joined.User.Role, joined.JoinedBy)
	}
	// The sign-in's audit row is durable before the browser gets its session.
	if err := s.commit(ctx, audit.Event{TenantID: t.ID, Kind: audit.KindSSOSignIn, Principal: "user:" + joined.User.ID, KeyID: joined.Session.ID, Outcome: "ok", Detail: truncate(detail, 500)}); err != nil {
		s.ssoInternal(w, r, t.Slug, "record sign-in", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tenants.SessionCookie, Value: joined.Token, Path: "/", HttpOnly: true, Secure: s.secure(),
		SameSite: http.SameSiteLaxMode, MaxAge: int(tenants.SessionLifetime.Seconds())})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, login.Next, http.StatusSeeOther)
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

var ssoErrorTemplate = template.Must(template.ParseFS(templateFS, "templates/sso_error.html"))

// renderSSOError shows why a single sign-on did not work, with the way back to the
// workspace's sign-in page.
func (s *Server) renderSSOError(w http.ResponseWriter, r *http.Request, status int, slug, msg string) {
	back := "/signin"
	if slug != "" {
		back += "?workspace=" + url.QueryEscape(slug)
	}
	var b strings.Builder
	if err := ssoErrorTemplate.Execute(&b, map[string]string{"Message": sentence(msg), "Back": back}); err != nil {
		http.Error(w, msg, status)
		return
	}
	pageHeaders(w, "'self'")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// ssoInternal logs a server-side failure and tells the person to try again.
func (s *Server) ssoInternal(w http.ResponseWriter, r *http.Request, slug, doing string, err error) {
	s.o.Logger.ErrorContext(r.Context(), "single sign-on: "+doing, "err", err)
	s.renderSSOError(w, r, http.StatusInternalServerError, slug, "Signing in failed on the server. Try again in a moment, and tell the operator if it persists.")
}

// sentence capitalizes a message for a page.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}
