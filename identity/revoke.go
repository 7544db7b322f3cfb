package identity

import (
	"errors"
	"net/http"
	"strings"

	"gorm.io/gorm"
)

// RevocationPath is the token revocation endpoint (RFC 7009).
const RevocationPath = "/oauth/revoke"

// Revoke is the revocation endpoint (RFC 7009): a client revokes one of its refresh
// or access tokens, and with it the whole grant, on every node. An unknown, foreign or
// already revoked token gets the same 200, as the RFC asks, so the endpoint says
// nothing about tokens the client does not hold.
func (s *Server) Revoke(w http.ResponseWriter, r *http.Request) {
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
	c, oerr := s.authenticateClient(r)
	if oerr != nil {
		s.tokenError(w, r, oerr)
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		s.tokenError(w, r, invalidRequest("token is required"))
		return
	}
	ctx := r.Context()
	var grant Grant
	var err error
	switch {
	case strings.HasPrefix(token, "sbr_"):
		var rt refreshToken
		err = s.o.DB.WithContext(ctx).Where("hash = ?", hashSecret(token)).Take(&rt).Error
		if err == nil {
			err = s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ?", rt.TenantID, rt.GrantID).Take(&grant).Error
		}
	case LooksLikeAccessToken(token):
		claims, verr := s.verifyAccessToken(ctx, token)
		if verr != nil {
			err = gorm.ErrRecordNotFound // not a live token of ours: nothing to revoke
			break
		}
		err = s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ?", claims.Tenant, claims.Grant).Take(&grant).Error
	default:
		err = gorm.ErrRecordNotFound
	}
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		s.o.Logger.ErrorContext(ctx, "revocation endpoint", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "server_error", "error_description": "try again"})
		return
	}
	if err == nil && grant.ClientID == c.ID {
		if _, err := s.revokeGrant(ctx, grant.TenantID, grant.ID); err != nil {
			s.o.Logger.ErrorContext(ctx, "revocation endpoint", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "server_error", "error_description": "try again"})
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}
