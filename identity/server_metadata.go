package identity

import "net/http"

// ServerMetadata is the RFC 8414 authorization server metadata document.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
	// ClientIDMetadataDocumentSupported: a client may use the https URL of its
	// metadata document as its client_id, without registering.
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported"`
}

// Metadata returns the server's metadata document.
func (s *Server) Metadata() ServerMetadata {
	base := s.o.PublicURL
	return ServerMetadata{
		Issuer: base, AuthorizationEndpoint: base + AuthorizePath, TokenEndpoint: base + TokenPath, RegistrationEndpoint: base + RegistrationPath,
		RevocationEndpoint: base + RevocationPath, RevocationEndpointAuthMethods: []string{authNone, authSecretPost, authSecretBasic},
		ScopesSupported: []string{ScopeMCP}, ResponseTypesSupported: []string{"code"}, ResponseModesSupported: []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: []string{authNone, authSecretPost, authSecretBasic},
		// S256 only: plain PKCE protects nothing against a code interceptor.
		CodeChallengeMethodsSupported: []string{"S256"}, AuthorizationResponseISSSupported: true,
		ClientIDMetadataDocumentSupported: true,
	}
}

// ServeMetadata answers the metadata document (and CORS preflights: it is public).
func (s *Server) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "GET, HEAD") {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed", "error_description": "use GET"})
		return
	}
	writeJSON(w, http.StatusOK, s.Metadata())
}
