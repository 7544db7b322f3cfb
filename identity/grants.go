package identity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
)

// grantRevokedKind is the change event of a revoked grant (ID: the grant id): every
// node stops accepting its tokens and ends its open MCP requests at once.
const grantRevokedKind events.Kind = "oauth.grant.revoked"

// grantTTL bounds how long a node trusts a grant it checked without hearing of a
// revocation; the change feed makes revocations immediate, this is the backstop.
const grantTTL = 30 * time.Second

// maxCachedGrants bounds the grant cache.
const maxCachedGrants = 10000

// touchEvery is how often a grant's last_used_at is written at most.
const touchEvery = time.Minute

// grantCache holds checked grants by id for grantTTL.
type grantCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]grantEntry
}

type grantEntry struct {
	p        switchboard.Principal
	resource string
	expires  time.Time
	touched  time.Time
}

// errInvalidToken is the answer to any access token that is malformed, forged,
// expired or revoked, so the answer does not say which.
func errInvalidToken() error {
	return &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "invalid, expired or revoked access token; sign in again"}
}

// grantPrincipal returns who a live grant acts as at its resource. The grant's id is
// the principal's KeyID, so whatever follows a key (sessions, audit) follows the grant.
func (s *Server) grantPrincipal(ctx context.Context, tenant switchboard.TenantID, grantID string) (switchboard.Principal, string, error) {
	now := s.now()
	s.grants.mu.Lock()
	e, ok := s.grants.entries[grantID]
	gen := s.grants.gen
	s.grants.mu.Unlock()
	if ok && e.p.TenantID == tenant && now.Before(e.expires) {
		if now.Sub(e.touched) >= touchEvery {
			s.touch(tenant, grantID, now)
		}
		return e.p, e.resource, nil
	}
	var row struct {
		UserID     string
		AgentID    string
		Resource   string
		RevokedAt  *time.Time
		LastUsedAt *time.Time
		Role       switchboard.Role
		Slug       string
	}
	err := s.o.DB.WithContext(ctx).Table("oauth_grants AS g").
		Select("g.user_id, g.agent_id, g.resource, g.revoked_at, g.last_used_at, u.role, t.slug").
		Joins("JOIN users u ON u.id = g.user_id AND u.tenant_id = g.tenant_id").
		Joins("JOIN tenants t ON t.id = g.tenant_id").
		Where("g.tenant_id = ? AND g.id = ?", tenant, grantID).
		Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return switchboard.Principal{}, "", errInvalidToken()
	}
	if err != nil {
		return switchboard.Principal{}, "", switchboard.Internal(fmt.Errorf("check grant: %w", err))
	}
	if row.RevokedAt != nil {
		return switchboard.Principal{}, "", errInvalidToken()
	}
	p := switchboard.Principal{TenantID: tenant, TenantSlug: row.Slug, Kind: switchboard.PrincipalUser, UserID: row.UserID, Role: row.Role, KeyID: grantID}
	if row.AgentID != "" {
		p.Kind, p.AgentID = switchboard.PrincipalAgent, row.AgentID
	}
	touched := time.Time{}
	if row.LastUsedAt != nil {
		touched = *row.LastUsedAt
	}
	if now.Sub(touched) >= touchEvery {
		s.touch(tenant, grantID, now)
		touched = now
	}
	s.grants.mu.Lock()
	if s.grants.gen == gen {
		if len(s.grants.entries) >= maxCachedGrants {
			clear(s.grants.entries)
		}
		s.grants.entries[grantID] = grantEntry{p: p, resource: row.Resource, expires: now.Add(grantTTL), touched: touched}
	}
	s.grants.mu.Unlock()
	return p, row.Resource, nil
}

// touch records that a grant was used (Connected apps shows it), best effort.
func (s *Server) touch(tenant switchboard.TenantID, grantID string, at time.Time) {
	s.grants.mu.Lock()
	if e, ok := s.grants.entries[grantID]; ok {
		e.touched = at
		s.grants.entries[grantID] = e
	}
	s.grants.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.o.DB.WithContext(ctx).Model(&Grant{}).Where("tenant_id = ? AND id = ?", tenant, grantID).
		Update("last_used_at", at.UTC().Truncate(time.Microsecond)).Error // a missed write only delays last_used_at
}

// forgetGrants drops the cached grants that match.
func (s *Server) forgetGrants(match func(switchboard.Principal, string) bool) {
	s.grants.mu.Lock()
	defer s.grants.mu.Unlock()
	s.grants.gen++
	for id, e := range s.grants.entries {
		if match(e.p, id) {
			delete(s.grants.entries, id)
		}
	}
}

// OnGrantsRevoked registers fn to hear of revoked grants, on this node and (with a
// feed) every other, so open MCP requests made with their tokens end at once; the
// grant id is the principal's KeyID.
func (s *Server) OnGrantsRevoked(fn func(tenant switchboard.TenantID, grantIDs []string)) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	s.hooks = append(s.hooks, fn)
}

func (s *Server) grantsRevoked(tenant switchboard.TenantID, ids []string) {
	s.forgetGrants(func(p switchboard.Principal, id string) bool {
		return p.TenantID == tenant && contains(ids, id)
	})
	s.hooksMu.Lock()
	hooks := append([]func(switchboard.TenantID, []string){}, s.hooks...)
	s.hooksMu.Unlock()
	for _, fn := range hooks {
		fn(tenant, ids)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// SetFeed makes the server publish grant revocations on the change feed, and drop
// what it cached when any node revokes a grant, removes a user or changes a role
// (everything after a gap), or the keyring rotates. Call it once, while wiring.
func (s *Server) SetFeed(b events.Bus) {
	s.feed = b
	b.Subscribe(func(e events.Event) {
		switch e.Kind {
		case events.Gap:
			s.forgetGrants(func(switchboard.Principal, string) bool { return true })
			s.keys.forget()
		case grantRevokedKind:
			if e.Origin != b.Node() { // this node handled its own revocation already
				s.grantsRevoked(e.Tenant, []string{e.ID})
			}
		case events.UserRemoved, events.UserRoleChanged:
			s.forgetGrants(func(p switchboard.Principal, _ string) bool { return p.TenantID == e.Tenant && p.UserID == e.ID })
		case events.KeyringRotated:
			s.keys.forget()
		}
	})
}

// revokeGrant revokes a grant and every refresh token of it; it reports whether the
// grant was live.
func (s *Server) revokeGrant(ctx context.Context, tenant switchboard.TenantID, grantID string) (bool, error) {
	now := s.now().UTC()
	var revoked bool
	err := s.o.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Grant{}).Where("tenant_id = ? AND id = ? AND revoked_at IS NULL", tenant, grantID).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		revoked = res.RowsAffected == 1
		return tx.Model(&refreshToken{}).Where("tenant_id = ? AND grant_id = ? AND used_at IS NULL", tenant, grantID).Update("used_at", now).Error
	})
	if err != nil {
		return false, switchboard.Internal(fmt.Errorf("revoke grant %s: %w", grantID, err))
	}
	s.grantsRevoked(tenant, []string{grantID})
	events.PublishAfterCommit(ctx, s.feed, s.o.Logger, events.Event{Kind: grantRevokedKind, Tenant: tenant, ID: grantID})
	return revoked, nil
}
