package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/httpx"
)

// maxTokenRequestBytes bounds a token request.
const maxTokenRequestBytes = 16 << 10

// verifierPattern is an RFC 7636 code verifier.
var verifierPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// tokenResponse is a successful token response (RFC 6749 section 5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// oauthError is a refused token request (RFC 6749 section 5.2).
type oauthError struct {
	status      int
	code        string
	description string
}

func (e *oauthError) Error() string { return e.code + ": " + e.description }

func invalidGrant(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_grant", description: desc}
}

func invalidRequest(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_request", description: desc}
}

// allowCORS lets browser-based MCP clients from any origin call the endpoint (no
// cookies are involved), with the headers the MCP URLs allow; it answers a preflight
// and reports true when it did.
func allowCORS(w http.ResponseWriter, r *http.Request, methods string) bool {
	if r.Method == http.MethodOptions {
		httpx.AnswerPreflight(w, "*", methods+", OPTIONS")
		return true
	}
	httpx.AllowOrigin(w.Header(), "*")
	return false
}

// Token is the token endpoint: authorization_code (with the PKCE verifier) and
// refresh_token grants.
func (s *Server) Token(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "POST") {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "use POST"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestBytes)
	if err := r.ParseForm(); err != nil {
		s.tokenError(w, r, invalidRequest("the body must be application/x-www-form-urlencoded"))
		return
	}
	f := r.PostForm
	for name, v := range f {
		if len(v) > 1 {
			s.tokenError(w, r, invalidRequest(name+" is repeated; send it once"))
			return
		}
	}
	c, oerr := s.authenticateClient(r)
	if oerr != nil {
		s.tokenError(w, r, oerr)
		return
	}
	var (
		resp tokenResponse
		err  error
	)
	switch f.Get("grant_type") {
	case "authorization_code":
		resp, err = s.exchangeCode(r.Context(), c, f)
	case "refresh_token":
		resp, err = s.refresh(r.Context(), c, f)
	case "":
		err = invalidRequest("grant_type is required")
	default:
		err = &oauthError{status: http.StatusBadRequest, code: "unsupported_grant_type", description: "grant_type must be authorization_code or refresh_token"}
	}
	if err != nil {
		var oe *oauthError
		if !errors.As(err, &oe) {
			s.o.Logger.ErrorContext(r.Context(), "token endpoint", "err", err)
			oe = &oauthError{status: http.StatusInternalServerError, code: "server_error", description: "internal error"}
		}
		s.tokenError(w, r, oe)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) tokenError(w http.ResponseWriter, r *http.Request, e *oauthError) {
	if e.status == http.StatusUnauthorized {
		if _, _, basic := r.BasicAuth(); basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="switchboard"`)
		}
	}
	writeJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.description})
}

// authenticateClient identifies the client of a token or revocation request: a public
// client by its client_id, a confidential one by its secret (HTTP Basic or in the body).
func (s *Server) authenticateClient(r *http.Request) (clientInfo, *oauthError) {
	id, secret, basic := r.BasicAuth()
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return clientInfo{}, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: "malformed client credentials"}
		}
		if fid := r.PostForm.Get("client_id"); fid != "" && fid != id {
			return clientInfo{}, invalidRequest("client_id in the body differs from the one in Authorization")
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" {
		return clientInfo{}, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: "client_id is required"}
	}
	c, err := s.client(r.Context(), id)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeInternal {
			return clientInfo{}, &oauthError{status: http.StatusInternalServerError, code: "server_error", description: "internal error"}
		}
		if e := switchboard.AsError(err); e.Code == switchboard.CodeInvalid || e.Code == switchboard.CodeUnavailable {
			return clientInfo{}, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: e.Message}
		}
		return clientInfo{}, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: "unknown client_id"}
	}
	if c.AuthMethod != authNone && !c.secretMatches(secret) {
		return clientInfo{}, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: "this client must authenticate with its client secret"}
	}
	return c, nil
}

// pkceMatches checks a code verifier against an S256 challenge.
func pkceMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// exchangeCode redeems an authorization code once: the grant is created with its
// first tokens. A second use of the code revokes that grant (RFC 6749 section 4.1.2).
func (s *Server) exchangeCode(ctx context.Context, c clientInfo, f url.Values) (tokenResponse, error) {
	plain, verifier := f.Get("code"), f.Get("code_verifier")
	if plain == "" {
		return tokenResponse{}, invalidRequest("code is required")
	}
	if !verifierPattern.MatchString(verifier) {
		return tokenResponse{}, invalidRequest("code_verifier is required: 43 to 128 characters of A-Z, a-z, 0-9 and -._~ (PKCE)")
	}
	var row code
	err := s.o.DB.WithContext(ctx).Where("hash = ?", hashSecret(plain)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return tokenResponse{}, invalidGrant("unknown or expired authorization code")
	}
	if err != nil {
		return tokenResponse{}, fmt.Errorf("read code: %w", err)
	}
	now := s.now().UTC()
	if row.UsedAt != nil {
		if row.GrantID != "" {
			if _, err := s.revokeGrant(ctx, row.TenantID, row.GrantID); err != nil {
				return tokenResponse{}, err
			}
		}
		return tokenResponse{}, invalidGrant("this authorization code was already used; the access it gave is revoked")
	}
	switch {
	case row.ClientID != c.ID:
		return tokenResponse{}, invalidGrant("the authorization code was issued to another client")
	case now.After(row.ExpiresAt):
		return tokenResponse{}, invalidGrant("unknown or expired authorization code")
	case f.Get("redirect_uri") != row.RedirectURI:
		return tokenResponse{}, invalidGrant("redirect_uri must be the one the authorization request used")
	case !pkceMatches(verifier, row.Challenge):
		return tokenResponse{}, invalidGrant("code_verifier does not match the code_challenge (PKCE)")
	}
	if res := f.Get("resource"); res != "" && res != row.Resource {
		return tokenResponse{}, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "resource must be the MCP URL the person allowed: " + row.Resource}
	}
	g := Grant{
		ID: switchboard.NewID("grt"), TenantID: row.TenantID, ClientID: row.ClientID, ClientName: row.ClientName, Resource: row.Resource,
		Scope: row.Scope, UserID: row.UserID, AgentID: row.AgentID, ConsentedBy: row.ConsentedBy, CreatedAt: now,
	}
	var refresh string
	err = s.o.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&code{}).Where("tenant_id = ? AND id = ? AND used_at IS NULL", row.TenantID, row.ID).
			Updates(map[string]any{"used_at": now, "grant_id": g.ID})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return invalidGrant("this authorization code was already used")
		}
		if err := tx.Create(&g).Error; err != nil {
			return err
		}
		var err error
		refresh, err = newRefreshToken(tx, g, now)
		return err
	})
	if err != nil {
		return tokenResponse{}, err
	}
	return s.respond(ctx, g, refresh)
}

// newRefreshToken stores a new refresh token of the grant and returns it.
func newRefreshToken(tx *gorm.DB, g Grant, now time.Time) (string, error) {
	plain := "sbr_" + switchboard.RandomToken(32)
	row := refreshToken{ID: switchboard.NewID("rft"), TenantID: g.TenantID, GrantID: g.ID, Hash: hashSecret(plain), CreatedAt: now, ExpiresAt: now.Add(RefreshTokenLifetime)}
	if err := tx.Create(&row).Error; err != nil {
		return "", err
	}
	return plain, nil
}

// refresh replaces a refresh token with a new one and a new access token. A refresh
// token used twice was copied: the grant is revoked, so neither copy works on.
func (s *Server) refresh(ctx context.Context, c clientInfo, f url.Values) (tokenResponse, error) {
	plain := f.Get("refresh_token")
	if plain == "" {
		return tokenResponse{}, invalidRequest("refresh_token is required")
	}
	var row refreshToken
	err := s.o.DB.WithContext(ctx).Where("hash = ?", hashSecret(plain)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return tokenResponse{}, invalidGrant("unknown refresh token")
	}
	if err != nil {
		return tokenResponse{}, fmt.Errorf("read refresh token: %w", err)
	}
	var g Grant
	if err := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ?", row.TenantID, row.GrantID).Take(&g).Error; err != nil {
		return tokenResponse{}, fmt.Errorf("read grant: %w", err)
	}
	if g.ClientID != c.ID {
		return tokenResponse{}, invalidGrant("the refresh token was issued to another client")
	}
	reused := func() (tokenResponse, error) {
		if _, err := s.revokeGrant(ctx, g.TenantID, g.ID); err != nil {
			return tokenResponse{}, err
		}
		return tokenResponse{}, invalidGrant("this refresh token was already used; the access it gave is revoked, so sign in again")
	}
	now := s.now().UTC()
	switch {
	case g.RevokedAt != nil:
		return tokenResponse{}, invalidGrant("the access was revoked; sign in again")
	case row.UsedAt != nil:
		return reused()
	case now.After(row.ExpiresAt):
		return tokenResponse{}, invalidGrant("the refresh token expired; sign in again")
	}
	if res := f.Get("resource"); res != "" && res != g.Resource {
		return tokenResponse{}, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "resource must be the MCP URL the person allowed: " + g.Resource}
	}
	if sc := f.Get("scope"); sc != "" && sc != g.Scope {
		return tokenResponse{}, &oauthError{status: http.StatusBadRequest, code: "invalid_scope", description: "scope may only be " + g.Scope}
	}
	var next string
	lost := false
	err = s.o.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&refreshToken{}).Where("tenant_id = ? AND id = ? AND used_at IS NULL", row.TenantID, row.ID).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			lost = true // used at the same moment by another request
			return nil
		}
		var err error
		next, err = newRefreshToken(tx, g, now)
		return err
	})
	if err != nil {
		return tokenResponse{}, err
	}
	if lost {
		return reused()
	}
	return s.respond(ctx, g, next)
}

// respond signs an access token for the grant and answers it with the refresh token.
func (s *Server) respond(ctx context.Context, g Grant, refresh string) (tokenResponse, error) {
	at, err := s.issueAccessToken(ctx, g)
	if err != nil {
		return tokenResponse{}, err
	}
	return tokenResponse{AccessToken: at, TokenType: "Bearer", ExpiresIn: int(AccessTokenLifetime / time.Second), RefreshToken: refresh, Scope: g.Scope}, nil
}
