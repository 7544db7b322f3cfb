package identity

import (
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

var consentTemplate = template.Must(template.ParseFS(templateFS, "templates/consent.html"))

// consentView is what the consent page shows.
type consentView struct {
	Request   authRequest
	Resource  string
	Slug      string
	AgentName string
	// Choices are the agents the person may give the client instead of their own
	// tools (at the workspace URL only).
	Choices        []AgentChoice
	RedirectHost   string
	CSRF           string
	WrongTenant    bool
	SignedInTenant string
	Error          string
}

// ClientName, Verified and the hidden fields are read by the template.
func (v consentView) ClientName() string { return v.Request.client.Name }
func (v consentView) Verified() bool     { return v.Request.client.Verified }
func (v consentView) ClientURI() string  { return v.Request.client.ClientURI }

// ClientHost is the host of a metadata document client's id: who vouches for it.
func (v consentView) ClientHost() string {
	u, err := url.Parse(v.Request.client.ID)
	if err != nil {
		return ""
	}
	return u.Host
}

// Fields are the authorization request's parameters, carried by the form.
func (v consentView) Fields() map[string]string {
	ar := v.Request
	return map[string]string{
		"client_id": ar.client.ID, "redirect_uri": ar.redirectURI, "response_type": "code", "code_challenge": ar.challenge,
		"code_challenge_method": "S256", "state": ar.state, "scope": ar.scope, "resource": ar.resource,
	}
}

// cspSource is what may appear in a CSP source list from a redirect URI's origin.
var cspSource = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:(//[A-Za-z0-9.:\[\]-]+)?$`)

// formAction is the consent page's CSP form-action: this site, and the client's
// redirect origin, since browsers apply form-action to the redirect after the post.
func formAction(redirectURI string) string {
	src := "'self'"
	u, err := url.Parse(redirectURI)
	if err != nil {
		return src
	}
	origin := u.Scheme + ":"
	if u.Host != "" {
		origin += "//" + u.Host
	}
	if cspSource.MatchString(origin) {
		src += " " + origin
	}
	return src
}

func pageHeaders(w http.ResponseWriter, formActions string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action "+formActions)
}

func (s *Server) renderConsent(w http.ResponseWriter, r *http.Request, status int, v consentView) {
	var b strings.Builder
	if err := consentTemplate.Execute(&b, v); err != nil {
		s.o.Logger.ErrorContext(r.Context(), "render consent page", "err", err)
		http.Error(w, "the consent page could not be rendered", http.StatusInternalServerError)
		return
	}
	pageHeaders(w, formAction(v.Request.redirectURI))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// renderError shows a refused authorization to the person (never to the client: its
// redirect URI is not trusted yet).
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var b strings.Builder
	if err := consentTemplate.Execute(&b, consentView{Error: msg}); err != nil {
		http.Error(w, msg, status)
		return
	}
	pageHeaders(w, "'self'")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}
