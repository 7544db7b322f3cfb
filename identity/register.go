package identity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard"
)

// maxRegistrationBytes bounds a registration request.
const maxRegistrationBytes = 16 << 10

// maxRedirectURIs bounds how many redirect URIs a client registers.
const maxRedirectURIs = 10

// registration is an RFC 7591 client registration request (the fields Switchboard
// reads; others are ignored, as the RFC allows).
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod *string  `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientURI               string   `json:"client_uri"`
	LogoURI                 string   `json:"logo_uri"`
}

// registered is the registration response.
type registered struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
}

// registrationError answers a refused registration (RFC 7591 section 3.2.2).
func registrationError(w http.ResponseWriter, code, field, reason string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": field + ": " + reason})
}

// Register is the dynamic client registration endpoint (RFC 7591): any client may
// register; what it says about itself is shown to the person as unverified. Each
// client address may register at the registration rate (allowRegistration); beyond
// it, 429 with Retry-After.
func (s *Server) Register(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "POST") {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "register with POST"})
		return
	}
	if !s.allowRegistration(w, r) {
		return
	}
	var req registration
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	if err := dec.Decode(&req); err != nil {
		registrationError(w, "invalid_client_metadata", "body", "must be a JSON object of client metadata (RFC 7591)")
		return
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		registrationError(w, "invalid_redirect_uri", "redirect_uris", fmt.Sprintf("must list 1 to %d redirect URIs", maxRedirectURIs))
		return
	}
	for i, u := range req.RedirectURIs {
		if why := checkRedirectURI(u); why != "" {
			registrationError(w, "invalid_redirect_uri", fmt.Sprintf("redirect_uris[%d]", i), why)
			return
		}
	}
	method := authSecretBasic // RFC 7591's default
	if req.TokenEndpointAuthMethod != nil {
		method = *req.TokenEndpointAuthMethod
	}
	if method != authNone && method != authSecretPost && method != authSecretBasic {
		registrationError(w, "invalid_client_metadata", "token_endpoint_auth_method", "must be none, client_secret_post or client_secret_basic")
		return
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			registrationError(w, "invalid_client_metadata", "grant_types", "only authorization_code and refresh_token are offered, not "+g)
			return
		}
	}
	for _, t := range req.ResponseTypes {
		if t != "code" {
			registrationError(w, "invalid_client_metadata", "response_types", "only code is offered, not "+t)
			return
		}
	}
	name := strings.TrimSpace(req.ClientName)
	if utf8.RuneCountInString(name) > 200 {
		registrationError(w, "invalid_client_metadata", "client_name", "must be at most 200 characters")
		return
	}
	for _, f := range []struct{ name, value string }{{"client_uri", req.ClientURI}, {"logo_uri", req.LogoURI}} {
		if why := checkWebURL(f.value); why != "" {
			registrationError(w, "invalid_client_metadata", f.name, why)
			return
		}
	}
	if name == "" {
		name = "Unnamed MCP client"
	}
	uris, _ := json.Marshal(req.RedirectURIs)
	row := client{ID: switchboard.NewID("cli"), Name: name, RedirectURIs: string(uris), AuthMethod: method, ClientURI: req.ClientURI, LogoURI: req.LogoURI, CreatedAt: s.now().UTC()}
	resp := registered{
		ClientID: row.ID, ClientIDIssuedAt: row.CreatedAt.Unix(), RedirectURIs: req.RedirectURIs, ClientName: name,
		TokenEndpointAuthMethod: method, GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		ClientURI: req.ClientURI, LogoURI: req.LogoURI,
	}
	if method != authNone {
		secret := "sbs_" + switchboard.RandomToken(32)
		row.SecretHash = hashSecret(secret)
		never := int64(0)
		resp.ClientSecret, resp.ClientSecretExpiresAt = secret, &never
	}
	if err := s.o.DB.WithContext(r.Context()).Create(&row).Error; err != nil {
		s.o.Logger.ErrorContext(r.Context(), "register OAuth client", "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error", "error_description": "internal error"})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, resp)
}
