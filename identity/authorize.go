package identity

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/tenants"
)

// maxConsentFormBytes bounds the consent form.
const maxConsentFormBytes = 32 << 10

// challengePattern is an RFC 7636 code challenge (a S256 one is 43 characters).
var challengePattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// authRequest is a checked authorization request.
type authRequest struct {
	client      clientInfo
	redirectURI string
	state       string
	challenge   string
	resource    string
	scope       string
	slug        string
	agentID     string
}

// authError is a refused authorization request. Until the client and its redirect URI
// are known good it is shown to the person (page); after, it goes back to the client.
type authError struct {
	page        bool
	code        string
	description string
}

// checkAuthRequest checks an authorization request's parameters (from the query of a
// GET, or the consent form of a POST).
func (s *Server) checkAuthRequest(ctx context.Context, q url.Values) (authRequest, *authError) {
	for _, name := range []string{"client_id", "redirect_uri", "response_type", "code_challenge", "code_challenge_method", "state", "scope", "resource"} {
		if len(q[name]) > 1 {
			if name == "resource" {
				return authRequest{}, &authError{page: true, code: "invalid_target", description: "name exactly one resource (the MCP URL)"}
			}
			return authRequest{}, &authError{page: true, code: "invalid_request", description: name + " is repeated; send it once"}
		}
	}
	var ar authRequest
	c, err := s.client(ctx, q.Get("client_id"))
	if err != nil {
		switch e := switchboard.AsError(err); e.Code {
		case switchboard.CodeInternal:
			s.o.Logger.ErrorContext(ctx, "authorize: read client", "err", err)
			return ar, &authError{page: true, code: "server_error", description: "the server could not read the client; try again"}
		case switchboard.CodeInvalid, switchboard.CodeUnavailable: // a metadata document that cannot be used, and why
			return ar, &authError{page: true, code: "invalid_client", description: e.Message}
		}
		return ar, &authError{page: true, code: "invalid_client", description: "the app asking for access is not registered here (unknown client_id)"}
	}
	ar.client = c
	ar.redirectURI = q.Get("redirect_uri")
	if ar.redirectURI == "" || !c.allowsRedirect(ar.redirectURI) {
		return ar, &authError{page: true, code: "invalid_request", description: "redirect_uri must be exactly one of the redirect URIs the app registered"}
	}
	ar.state = q.Get("state")
	if q.Get("response_type") != "code" {
		return ar, &authError{code: "unsupported_response_type", description: "response_type must be code"}
	}
	if q.Get("code_challenge_method") != "S256" {
		return ar, &authError{code: "invalid_request", description: "code_challenge_method must be S256: PKCE is required, and plain is refused"}
	}
	ar.challenge = q.Get("code_challenge")
	if !challengePattern.MatchString(ar.challenge) {
		return ar, &authError{code: "invalid_request", description: "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)"}
	}
	ar.resource = q.Get("resource")
	slug, agentID, ok := s.parseResource(ar.resource)
	if !ok {
		return ar, &authError{code: "invalid_target", description: "resource must be a Switchboard MCP URL of this server, such as " + ResourceURL(s.o.PublicURL, "acme", "")}
	}
	ar.slug, ar.agentID = slug, agentID
	ar.scope = ScopeMCP // the one scope; others asked for are not granted (RFC 6749 3.3)
	return ar, nil
}

// parseResource splits one of this server's MCP URLs into tenant slug and agent ID.
func (s *Server) parseResource(resource string) (string, string, bool) {
	rest, ok := strings.CutPrefix(resource, s.o.PublicURL)
	if !ok || resource == "" {
		return "", "", false
	}
	slug, agentID, ok := ParseResourcePath(rest)
	if !ok || !tenants.ValidSlug(slug) || ResourceURL(s.o.PublicURL, slug, agentID) != resource {
		return "", "", false
	}
	return slug, agentID, true
}

// redirectWith sends the browser back to the client's redirect URI with params, the
// state and the issuer (RFC 9207).
func (s *Server) redirectWith(w http.ResponseWriter, r *http.Request, ar authRequest, params url.Values) {
	u, err := url.Parse(ar.redirectURI)
	if err != nil { // checked at registration
		http.Error(w, "bad redirect URI", http.StatusBadRequest)
		return
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	q.Set("iss", s.Issuer())
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// fail answers a refused authorization request: a page, or the error sent back to the
// client.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, ar authRequest, e *authError) {
	if e.page {
		s.renderError(w, r, http.StatusBadRequest, e.description)
		return
	}
	s.redirectWith(w, r, ar, url.Values{"error": {e.code}, "error_description": {e.description}})
}

// signedIn returns the UI session of the request, if any.
func (s *Server) signedIn(r *http.Request) (string, switchboard.Principal, bool) {
	c, err := r.Cookie(tenants.SessionCookie)
	if err != nil || c.Value == "" {
		return "", switchboard.Principal{}, false
	}
	p, err := s.o.Sessions.Session(r.Context(), c.Value)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeInternal {
			s.o.Logger.ErrorContext(r.Context(), "authorize: read session", "err", err)
		}
		return "", switchboard.Principal{}, false
	}
	return c.Value, p, p.Kind == switchboard.PrincipalUser
}

// Authorize is the authorization endpoint: GET shows the consent page to the signed-in
// person (sending them to sign in first), POST takes their answer.
func (s *Server) Authorize(w http.ResponseWriter, r *http.Request) {
	var q url.Values
	switch r.Method {
	case http.MethodGet:
		q = r.URL.Query()
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, maxConsentFormBytes)
		if err := r.ParseForm(); err != nil {
			s.renderError(w, r, http.StatusBadRequest, "the consent form could not be read")
			return
		}
		q = r.PostForm
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	ar, aerr := s.checkAuthRequest(r.Context(), q)
	if aerr != nil {
		s.fail(w, r, ar, aerr)
		return
	}
	session, p, ok := s.signedIn(r)
	if !ok {
		if r.Method == http.MethodPost {
			s.renderError(w, r, http.StatusForbidden, "your Switchboard session ended; start connecting from the app again")
			return
		}
		http.Redirect(w, r, "/signin?next="+url.QueryEscape(AuthorizePath+"?"+r.URL.RawQuery), http.StatusSeeOther)
		return
	}
	view := consentView{Request: ar, Resource: ar.resource, Slug: ar.slug, CSRF: s.o.Sessions.CSRFToken(session), RedirectHost: redirectHost(ar.redirectURI)}
	if p.TenantSlug != ar.slug {
		view.WrongTenant, view.SignedInTenant = true, p.TenantSlug
		s.renderConsent(w, r, http.StatusForbidden, view)
		return
	}
	actsFor, agentID := p.UserID, ar.agentID
	if ar.agentID == "" && r.Method == http.MethodPost {
		// At the workspace URL the person may give the client one agent instead of
		// their own tools: the token still works at this URL only, as that agent.
		agentID = r.PostForm.Get("act_as")
	}
	if ar.agentID == "" && r.Method == http.MethodGet {
		choices, err := s.o.Agents.AgentsForGrant(r.Context(), p)
		if err != nil {
			s.o.Logger.ErrorContext(r.Context(), "authorize: list agents", "err", err)
		}
		view.Choices = choices
	}
	if agentID != "" {
		name, creator, err := s.o.Agents.AgentForGrant(r.Context(), p, agentID)
		if err != nil {
			e := switchboard.AsError(err)
			if e.Code == switchboard.CodeInternal {
				s.o.Logger.ErrorContext(r.Context(), "authorize: read agent", "err", err)
				s.renderError(w, r, http.StatusInternalServerError, "the server could not read the agent; try again")
				return
			}
			s.renderError(w, r, http.StatusForbidden, "you may not let an app act as this agent: "+e.Message)
			return
		}
		view.AgentName, actsFor = name, creator
	}
	if r.Method == http.MethodGet {
		s.renderConsent(w, r, http.StatusOK, view)
		return
	}
	if subtle.ConstantTimeCompare([]byte(view.CSRF), []byte(r.PostForm.Get("csrf"))) != 1 {
		s.renderError(w, r, http.StatusForbidden, "this answer did not come from the Switchboard consent page; start connecting from the app again")
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		s.redirectWith(w, r, ar, url.Values{"error": {"access_denied"}, "error_description": {"the person did not allow access"}})
		return
	}
	plain, err := s.newCode(r.Context(), ar, p, actsFor, agentID)
	if err != nil {
		s.o.Logger.ErrorContext(r.Context(), "authorize: store code", "err", err)
		s.redirectWith(w, r, ar, url.Values{"error": {"server_error"}, "error_description": {"the server could not record the consent; try again"}})
		return
	}
	s.redirectWith(w, r, ar, url.Values{"code": {plain}})
}

// newCode stores an authorization code for what the person allowed and returns it.
func (s *Server) newCode(ctx context.Context, ar authRequest, p switchboard.Principal, actsFor, agentID string) (string, error) {
	plain := "sbc_" + switchboard.RandomToken(32)
	now := s.now().UTC()
	row := code{
		ID: switchboard.NewID("cod"), TenantID: p.TenantID, Hash: hashSecret(plain), ClientID: ar.client.ID, ClientName: ar.client.Name,
		RedirectURI: ar.redirectURI, Challenge: ar.challenge, Resource: ar.resource, Scope: ar.scope,
		UserID: actsFor, AgentID: agentID, ConsentedBy: p.UserID, ExpiresAt: now.Add(CodeLifetime), CreatedAt: now,
	}
	if err := s.o.DB.WithContext(ctx).Create(&row).Error; err != nil {
		return "", err
	}
	return plain, nil
}

// redirectHost is the part of a redirect URI the person should check: its host (or,
// for an app's private-use scheme, the scheme).
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}
