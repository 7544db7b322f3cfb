// Package oauthtest runs a real OAuth 2.0 authorization server (github.com/go-oauth2/oauth2)
// for tests, shaped like GitHub or like Slack: their authorization and token endpoint
// paths, Slack's nested oauth.v2.access answer and ok:false failures, each provider's
// identity endpoint (GitHub GET /user, Slack auth.test) and revocation (GitHub's grant
// deletion, Slack auth.revoke), and a GitHub issue endpoint that only a valid access
// token may read. Redirect URIs must match exactly; GitHub style requires PKCE S256.
// Refreshes rotate the refresh token and revoke the old access and refresh tokens.
//
// Start from [Server], built from [Options] in a [Style] (GitHub's or Slack's); [OIDC]
// is an OpenID provider for sign-in.
package oauthtest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-oauth2/oauth2/v4"
	oerrors "github.com/go-oauth2/oauth2/v4/errors"
	"github.com/go-oauth2/oauth2/v4/manage"
	"github.com/go-oauth2/oauth2/v4/models"
	"github.com/go-oauth2/oauth2/v4/server"
	"github.com/go-oauth2/oauth2/v4/store"
)

// Style is the provider an authorization server imitates.
type Style string

// The styles.
const (
	GitHub Style = "github"
	Slack  Style = "slack"
)

// Options configure a Server.
type Options struct {
	Style        Style
	ClientID     string
	ClientSecret string
	// RedirectURI is the one callback URL registered for the client; authorization
	// requests must name it exactly.
	RedirectURI string
	// CodeTokenTTL is the lifetime of access tokens issued for a code; 0 never expires.
	CodeTokenTTL time.Duration
	// RefreshedTokenTTL is the lifetime of access tokens issued by a refresh.
	RefreshedTokenTTL time.Duration
	// NoRefresh issues no refresh tokens (a classic GitHub OAuth app).
	NoRefresh bool
	// UserOnly answers like Slack when only user scopes were granted: the token is
	// under authed_user and there is no bot token.
	UserOnly bool
	// AuthPath and TokenPath serve the authorization and token endpoints at these
	// paths (another provider's, such as Google's /o/oauth2/auth) instead of the
	// style's; "" keeps the style's.
	AuthPath, TokenPath string
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Form   url.Values // the parsed query and form body
	Auth   string     // the Authorization header
}

// Server is a running authorization server.
type Server struct {
	*httptest.Server
	opts Options
	mgr  *manage.Manager
	srv  *server.Server

	exchanges   atomic.Int64
	refreshes   atomic.Int64
	revocations atomic.Int64

	mu       sync.Mutex
	requests []Request
	failures map[string][]Failure
}

// Failure is a canned answer the server gives once, in place of the real one.
type Failure struct {
	Status int
	Body   string
	Header map[string]string
}

// New starts a Server; it stops when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{opts: o, failures: map[string][]Failure{}}
	s.mgr = manage.NewDefaultManager()
	s.mgr.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: o.CodeTokenTTL, IsGenerateRefresh: !o.NoRefresh})
	s.mgr.SetRefreshTokenCfg(&manage.RefreshingConfig{
		AccessTokenExp: o.RefreshedTokenTTL, IsGenerateRefresh: true, IsResetRefreshTime: true, IsRemoveAccess: true, IsRemoveRefreshing: true,
	})
	s.mgr.MustTokenStorage(store.NewMemoryTokenStore())
	clients := store.NewClientStore()
	if err := clients.Set(o.ClientID, &models.Client{ID: o.ClientID, Secret: o.ClientSecret, Domain: o.RedirectURI}); err != nil {
		t.Fatalf("register client: %v", err)
	}
	s.mgr.MapClientStorage(clients)
	s.mgr.SetValidateURIHandler(func(registered, redirect string) error {
		if registered != redirect {
			return oerrors.ErrInvalidRedirectURI
		}
		return nil
	})
	cfg := server.NewConfig()
	cfg.AllowedResponseTypes = []oauth2.ResponseType{oauth2.Code}
	cfg.AllowedGrantTypes = []oauth2.GrantType{oauth2.AuthorizationCode, oauth2.Refreshing}
	cfg.AllowedCodeChallengeMethods = []oauth2.CodeChallengeMethod{oauth2.CodeChallengeS256}
	cfg.ForcePKCE = o.Style == GitHub
	if o.Style == Slack {
		// Without PKCE the server takes the absent method for "plain"; it must accept it.
		cfg.AllowedCodeChallengeMethods = append(cfg.AllowedCodeChallengeMethods, oauth2.CodeChallengePlain)
	}
	s.srv = server.NewServer(cfg, s.mgr)
	s.srv.SetClientInfoHandler(server.ClientFormHandler)
	s.srv.SetUserAuthorizationHandler(func(w http.ResponseWriter, r *http.Request) (string, error) {
		if u, ok := r.Context().Value(userKey{}).(string); ok && u != "" {
			return u, nil
		}
		return "", oerrors.ErrAccessDenied
	})
	if o.Style == Slack {
		s.srv.SetResponseTokenHandler(s.slackTokenResponse)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

type userKey struct{}

// AuthURL is the authorization endpoint.
func (s *Server) AuthURL() string {
	if s.opts.AuthPath != "" {
		return s.URL + s.opts.AuthPath
	}
	if s.opts.Style == Slack {
		return s.URL + "/oauth/v2/authorize"
	}
	return s.URL + "/login/oauth/authorize"
}

// TokenURL is the token endpoint.
func (s *Server) TokenURL() string {
	if s.opts.TokenPath != "" {
		return s.URL + s.opts.TokenPath
	}
	if s.opts.Style == Slack {
		return s.URL + "/api/oauth.v2.access"
	}
	return s.URL + "/login/oauth/access_token"
}

// APIBase is the API base URL (GitHub's /api/v3, Slack's /api).
func (s *Server) APIBase() string {
	if s.opts.Style == Slack {
		return s.URL + "/api"
	}
	return s.URL + "/api/v3"
}

// Exchanges counts authorization codes exchanged for tokens.
func (s *Server) Exchanges() int64 { return s.exchanges.Load() }

// Refreshes counts refresh-token grants that issued a token.
func (s *Server) Refreshes() int64 { return s.refreshes.Load() }

// Revocations counts tokens revoked through the provider's revocation endpoint.
func (s *Server) Revocations() int64 { return s.revocations.Load() }

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// FailNext makes the next request to path (such as TokenURL's path) get f instead.
func (s *Server) FailNext(path string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[path] = append(s.failures[path], f)
}

// TokenValid reports whether an access token is currently valid at the server.
func (s *Server) TokenValid(access string) bool {
	_, err := s.mgr.LoadAccessToken(context.Background(), access)
	return err == nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Form: r.Form, Auth: r.Header.Get("Authorization")})
	var fail *Failure
	if q := s.failures[r.URL.Path]; len(q) > 0 {
		fail = &q[0]
		s.failures[r.URL.Path] = q[1:]
	}
	s.mu.Unlock()
	if fail != nil {
		for k, v := range fail.Header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(fail.Status)
		fmt.Fprint(w, fail.Body)
		return
	}
	authPath := strings.TrimPrefix(s.AuthURL(), s.URL)
	tokenPath := strings.TrimPrefix(s.TokenURL(), s.URL)
	api := strings.TrimPrefix(s.APIBase(), s.URL)
	switch p := r.URL.Path; {
	case p == authPath && r.Method == http.MethodGet:
		s.consentPage(w, r)
	case p == "/consent" && r.Method == http.MethodPost:
		s.decide(w, r)
	case p == tokenPath && r.Method == http.MethodPost:
		s.token(w, r)
	case s.opts.Style == GitHub && p == api+"/user" && r.Method == http.MethodGet:
		s.githubUser(w, r)
	case s.opts.Style == GitHub && strings.HasPrefix(p, api+"/repos/") && r.Method == http.MethodGet:
		s.githubIssue(w, r)
	case s.opts.Style == GitHub && strings.HasPrefix(p, api+"/applications/") && strings.HasSuffix(p, "/grant") && r.Method == http.MethodDelete:
		s.githubDeleteGrant(w, r, strings.TrimSuffix(strings.TrimPrefix(p, api+"/applications/"), "/grant"))
	case s.opts.Style == Slack && p == api+"/auth.test":
		s.slackAuthTest(w, r)
	case s.opts.Style == Slack && p == api+"/auth.revoke" && r.Method == http.MethodPost:
		s.slackRevoke(w, r)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	}
}

var consent = template.Must(template.New("consent").Parse(`<!doctype html><title>Authorize</title>
<p>{{.Client}} wants access to your account ({{.Scope}}).</p>
<form method="post" action="/consent"><input type="hidden" name="request" value="{{.Request}}">
<input name="user"><button name="decision" value="allow">Authorize</button><button name="decision" value="deny">Cancel</button></form>
`))

// consentPage shows what the client asks for; the person answers with POST /consent.
func (s *Server) consentPage(w http.ResponseWriter, r *http.Request) {
	if _, err := s.srv.ValidationAuthorizeRequest(r); err != nil {
		http.Error(w, "invalid authorization request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if r.FormValue("client_id") != s.opts.ClientID || r.FormValue("redirect_uri") != s.opts.RedirectURI {
		http.Error(w, "unknown client or redirect_uri mismatch", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = consent.Execute(w, map[string]string{"Client": r.FormValue("client_id"), "Scope": r.FormValue("scope"), "Request": r.URL.RawQuery})
}

// decide finishes the consent: allow issues a code to the redirect URI, deny sends
// error=access_denied there.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.PostFormValue("request"))
	if err != nil || q.Get("redirect_uri") != s.opts.RedirectURI {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if r.PostFormValue("decision") != "allow" {
		u, _ := url.Parse(q.Get("redirect_uri"))
		v := u.Query()
		v.Set("error", "access_denied")
		v.Set("state", q.Get("state"))
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
		return
	}
	ar := r.Clone(context.WithValue(r.Context(), userKey{}, r.PostFormValue("user")))
	ar.Method = http.MethodGet
	ar.URL.RawQuery = q.Encode()
	ar.Form = q
	ar.PostForm = url.Values{}
	if err := s.srv.HandleAuthorizeRequest(w, ar); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	grant := r.PostFormValue("grant_type")
	rec := &statusRecorder{ResponseWriter: w}
	_ = s.srv.HandleTokenRequest(rec, r)
	if rec.ok {
		switch grant {
		case "authorization_code":
			s.exchanges.Add(1)
		case "refresh_token":
			s.refreshes.Add(1)
		}
	}
}

// statusRecorder notes whether the token endpoint issued a token.
type statusRecorder struct {
	http.ResponseWriter
	ok bool
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if strings.Contains(string(b), `"access_token"`) {
		r.ok = true
	}
	return r.ResponseWriter.Write(b)
}

// slackTokenResponse answers like oauth.v2.access: 200 with ok:false on failure, and
// the bot token at the top with the user under authed_user (or, for user scopes only,
// the user's token under authed_user and none at the top).
func (s *Server) slackTokenResponse(w http.ResponseWriter, data map[string]any, _ http.Header, status ...int) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if e, ok := data["error"]; ok || (len(status) > 0 && status[0] >= 400) {
		return json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": e})
	}
	tok := map[string]any{"access_token": data["access_token"], "token_type": "bot", "scope": data["scope"]}
	if v, ok := data["refresh_token"]; ok {
		tok["refresh_token"] = v
	}
	if v, ok := data["expires_in"]; ok {
		tok["expires_in"] = v
	}
	out := map[string]any{
		"ok": true, "app_id": "A0APP", "bot_user_id": "UBOT", "team": map[string]any{"id": "T0TEAM", "name": "Acme"},
		"enterprise": nil, "is_enterprise_install": false, "authed_user": map[string]any{"id": "U0USER"},
	}
	if s.opts.UserOnly {
		user := map[string]any{"id": "U0USER"}
		for k, v := range tok {
			user[k] = v
		}
		user["token_type"] = "user"
		out["authed_user"] = user
	} else {
		for k, v := range tok {
			out[k] = v
		}
	}
	return json.NewEncoder(w).Encode(out)
}

func (s *Server) bearer(r *http.Request) (oauth2.TokenInfo, bool) {
	ti, err := s.srv.ValidationBearerToken(r)
	return ti, err == nil
}

func (s *Server) githubUser(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	ti, ok := s.bearer(r)
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	w.Header().Set("X-OAuth-Scopes", strings.Join(strings.Fields(ti.GetScope()), ", "))
	_ = json.NewEncoder(w).Encode(map[string]any{"id": githubUserID(ti.GetUserID()), "login": ti.GetUserID()})
}

// githubUserID is the numeric id GitHub gives the login: 4242 for octocat, and every
// other login its own, as on GitHub, so signing in as another user is another account.
func githubUserID(login string) int64 {
	if login == "octocat" {
		return 4242
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(login))
	return 100000 + int64(h.Sum32()%900000)
}

func (s *Server) githubIssue(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if _, ok := s.bearer(r); !ok {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	fmt.Fprint(w, `{"number":1,"title":"Refresh once","state":"open","body":"","user":{"login":"octocat","id":1,"type":"User"},"labels":[],"assignees":[],"comments":0,"locked":false,"html_url":"https://github.com/o/r/issues/1","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`)
}

// githubDeleteGrant revokes every token of the grant the access token belongs to.
func (s *Server) githubDeleteGrant(w http.ResponseWriter, r *http.Request, clientID string) {
	w.Header().Set("Content-Type", "application/json")
	id, secret, ok := r.BasicAuth()
	if !ok || id != s.opts.ClientID || secret != s.opts.ClientSecret || clientID != s.opts.ClientID {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Requires authentication"}`)
		return
	}
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.AccessToken == "" {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"message":"Invalid request.\n\n\"access_token\" wasn't supplied."}`)
		return
	}
	ti, err := s.mgr.LoadAccessToken(r.Context(), body.AccessToken)
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
		return
	}
	s.remove(r.Context(), ti)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) remove(ctx context.Context, ti oauth2.TokenInfo) {
	_ = s.mgr.RemoveAccessToken(ctx, ti.GetAccess())
	if rt := ti.GetRefresh(); rt != "" {
		_ = s.mgr.RemoveRefreshToken(ctx, rt)
	}
	s.revocations.Add(1)
}

func (s *Server) slackAuthTest(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	ti, ok := s.bearer(r)
	if !ok {
		fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
		return
	}
	w.Header().Set("X-OAuth-Scopes", ti.GetScope())
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "url": "https://acme.slack.com/", "team": "Acme", "user": ti.GetUserID(), "team_id": "T0TEAM", "user_id": "U0USER"})
}

func (s *Server) slackRevoke(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	ti, ok := s.bearer(r)
	if !ok {
		fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
		return
	}
	s.remove(r.Context(), ti)
	fmt.Fprint(w, `{"ok":true,"revoked":true}`)
}
