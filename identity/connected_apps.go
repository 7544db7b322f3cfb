package identity

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// ListGrants lists the tenant's live grants that p may see, newest first: an admin's
// view is every grant of the tenant, a member's the grants they allowed themselves.
func (s *Server) ListGrants(ctx context.Context, p switchboard.Principal) ([]Grant, error) {
	if p.Kind != switchboard.PrincipalUser {
		return nil, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "an agent's key cannot manage connected apps"}
	}
	q := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND revoked_at IS NULL", p.TenantID)
	if !p.Role.IsAdmin() {
		q = q.Where("consented_by = ?", p.UserID)
	}
	grants := []Grant{}
	if err := q.Order("created_at DESC").Limit(1000).Find(&grants).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list grants: %w", err))
	}
	return grants, nil
}

// RevokeGrant revokes a grant p may see (see ListGrants): at once, on every node, its
// tokens stop working and open MCP requests made with them end. Another's grant, for
// a member, is not found.
func (s *Server) RevokeGrant(ctx context.Context, p switchboard.Principal, id string) (Grant, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Grant{}, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "an agent's key cannot manage connected apps"}
	}
	if id == "" || len(id) > 40 {
		return Grant{}, switchboard.Invalid("id", "must be a connected app's id (grt_…)")
	}
	var g Grant
	err := s.o.DB.WithContext(ctx).Where("tenant_id = ? AND id = ? AND revoked_at IS NULL", p.TenantID, id).Take(&g).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && !p.Role.IsAdmin() && g.ConsentedBy != p.UserID) {
		return Grant{}, switchboard.NotFound("connected app")
	}
	if err != nil {
		return Grant{}, switchboard.Internal(fmt.Errorf("read grant: %w", err))
	}
	if _, err := s.revokeGrant(ctx, p.TenantID, id); err != nil {
		return Grant{}, err
	}
	now := s.now().UTC()
	g.RevokedAt = &now
	return g, nil
}
