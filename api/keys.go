package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/tenants"
)

// keyView is an API key as listings show it: its prefix, never the key or its hash.
type keyView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	UserID     string     `json:"user_id"`
	AgentID    string     `json:"agent_id,omitempty"`
	CreatedBy  string     `json:"created_by"`
	Operator   bool       `json:"operator"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	// Expired says the key's expiry has passed: it no longer works.
	Expired bool `json:"expired,omitempty"`
}

// createdKey is a new key: Key is the plaintext, shown this once.
type createdKey struct {
	keyView
	Key string `json:"key"`
}

// listKeys lists the tenant's keys for admins, the caller's own keys for members.
func (s *server) listKeys(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	list, err := s.Tenants.ListKeys(c.Request.Context(), p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]keyView, 0, len(list))
	for _, k := range list {
		if p.IsAdmin() || k.UserID == p.UserID {
			out = append(out, viewKey(k))
		}
	}
	c.JSON(http.StatusOK, gin.H{"keys": out})
}

// createKeyRequest creates a key for the caller. There is no user field: every user
// mints keys only for themselves, so that no admin can act as another user (the owner
// included) or use their private connections. A new user's first key comes with the
// answer to POST /api/users.
type createKeyRequest struct {
	Name string `json:"name"`
	// ExpiresInDays makes the key stop working that many days from now (1 to 3650);
	// absent, it works until revoked.
	ExpiresInDays *int `json:"expires_in_days"`
}

// maxKeyDays is the longest expiry a key may be given (ten years).
const maxKeyDays = 3650

// expiry is when a key asked for with the request expires (nil: never).
func (r createKeyRequest) expiry() (*time.Time, error) {
	if r.ExpiresInDays == nil {
		return nil, nil
	}
	if d := *r.ExpiresInDays; d < 1 || d > maxKeyDays {
		return nil, switchboard.Invalid("expires_in_days", fmt.Sprintf("must be a whole number of days from 1 to %d; leave it out for a key that never expires", maxKeyDays))
	}
	at := time.Now().Add(time.Duration(*r.ExpiresInDays) * 24 * time.Hour)
	return &at, nil
}

func (s *server) createKey(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req createKeyRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"name", req.Name}); err != nil {
		s.fail(c, err)
		return
	}
	expires, err := req.expiry()
	if err != nil {
		s.fail(c, err)
		return
	}
	plain, key, err := s.Tenants.CreateExpiringKey(c.Request.Context(), p.TenantID, p.UserID, req.Name, false, expires)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindKeyCreated, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: "created key " + key.ID + " for user " + p.UserID})
	c.JSON(http.StatusCreated, createdKey{keyView: viewKey(key), Key: plain})
}

// revokeKey revokes one of the caller's keys or, for admins, any key of the tenant
// except the operator's, which only an operator revokes. A key the caller may not
// revoke is not found, like a missing one.
func (s *server) revokeKey(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	id := c.Param("id")
	key, err := s.Tenants.Key(ctx, p.TenantID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	// The deployment operator's keys are beyond a tenant admin's reach: revoking one
	// would lock the operator out. Only an operator revokes them.
	if (!p.IsAdmin() && key.UserID != p.UserID) || (key.Operator && !p.Operator) {
		s.fail(c, switchboard.NotFound("API key"))
		return
	}
	revoked, err := s.Tenants.RevokeKey(ctx, p.TenantID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !revoked { // revoked before: nothing changed, so nothing to record
		c.Status(http.StatusNoContent)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindKeyRevoked, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: "revoked key " + id})
	c.Status(http.StatusNoContent)
}

func viewKey(k tenants.APIKey) keyView {
	agent := ""
	if k.AgentID != nil {
		agent = *k.AgentID
	}
	return keyView{
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, UserID: k.UserID, AgentID: agent, CreatedBy: k.CreatedBy, Operator: k.Operator,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, ExpiresAt: k.ExpiresAt, Expired: k.Expired(time.Now()),
	}
}
