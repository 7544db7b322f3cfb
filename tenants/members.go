package tenants

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
)

// errLastOwner is the answer to a change that would leave a tenant without an owner.
func errLastOwner() error {
	return &switchboard.Error{Code: switchboard.CodeConflict, Field: "role",
		Message: "this user is the tenant's last owner: make another user an owner first"}
}

// lockTenant takes the tenant's row lock for the rest of the transaction (a no-op
// update: PostgreSQL locks the row, SQLite serialises writers anyway), so that two
// concurrent changes cannot each see the other owner and leave the tenant with none.
func lockTenant(tx *gorm.DB, tenant switchboard.TenantID) error {
	res := tx.Exec("UPDATE tenants SET name = name WHERE id = ?", tenant)
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("lock tenant %s: %w", tenant, res.Error))
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("user")
	}
	return nil
}

// otherOwners counts the tenant's owners other than userID.
func otherOwners(tx *gorm.DB, tenant switchboard.TenantID, userID string) (int64, error) {
	var n int64
	err := tx.Model(&User{}).Where("tenant_id = ? AND role = ? AND id <> ?", tenant, switchboard.RoleOwner, userID).Count(&n).Error
	if err != nil {
		return 0, switchboard.Internal(fmt.Errorf("count owners: %w", err))
	}
	return n, nil
}

// takeUser reads one of the tenant's users inside a transaction.
func takeUser(tx *gorm.DB, tenant switchboard.TenantID, id string) (User, error) {
	var u User
	err := tx.Where("tenant_id = ? AND id = ?", tenant, id).Take(&u).Error
	return u, notFound(err, "user", "read user "+id)
}

// SetUserRole changes the role of one of the tenant's users and returns the user as it
// was and as it is now. Demoting the tenant's last owner is a conflict. The user's API
// keys answer with the new role at once in this process, and within the key cache's
// lifetime (30 s) in others; web sessions read the role on every request. The unused
// invitations the user made that the new role could not make are dropped.
func (s *Store) SetUserRole(ctx context.Context, tenant switchboard.TenantID, id string, role switchboard.Role) (User, User, error) {
	switch role {
	case switchboard.RoleOwner, switchboard.RoleAdmin, switchboard.RoleMember:
	default:
		return User{}, User{}, switchboard.Invalid("role", "must be one of owner, admin, member")
	}
	var before, after User
	var keyIDs []string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockTenant(tx, tenant); err != nil {
			return err
		}
		var err error
		if before, err = takeUser(tx, tenant, id); err != nil {
			return err
		}
		after = before
		if before.Role == role {
			return nil
		}
		if before.Role == switchboard.RoleOwner {
			n, err := otherOwners(tx, tenant, id)
			if err != nil {
				return err
			}
			if n == 0 {
				return errLastOwner()
			}
		}
		if err := tx.Model(&User{}).Where("tenant_id = ? AND id = ?", tenant, id).Update("role", role).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("set role of user %s: %w", id, err))
		}
		after.Role = role
		if err := dropLinksBeyond(tx, tenant, id, role); err != nil {
			return err
		}
		if err := tx.Model(&APIKey{}).Where("tenant_id = ? AND user_id = ?", tenant, id).Pluck("id", &keyIDs).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("list keys of user %s: %w", id, err))
		}
		return nil
	})
	if err != nil {
		return User{}, User{}, asStoreError(err, "set role of user "+id)
	}
	for _, k := range keyIDs {
		s.cache.invalidateKey(k)
	}
	events.PublishAfterCommit(ctx, s.feed, nil, events.Event{Kind: events.UserRoleChanged, Tenant: tenant, ID: id})
	return before, after, nil
}

// Removal is what removing a user took away with them.
type Removal struct {
	// User is the removed user as they were.
	User User
	// RevokedKeys are the IDs of the user's keys (agents' keys on their behalf
	// included) that were live until the removal.
	RevokedKeys []string
	// EndedSessions counts the user's web sessions that were ended.
	EndedSessions int64
}

// RemoveUser removes one of the tenant's users: it revokes their API keys, ends their
// web sessions, drops their unused password links and the invitations they made, then
// deletes the user, which deletes the agents they created (they act for their
// creator). Removing the tenant's last owner is a conflict. A user who holds an operator key is removed only when
// operator is true (the caller is the operator), lest a tenant admin lock the
// deployment's operator out; otherwise they answer forbidden.
func (s *Store) RemoveUser(ctx context.Context, tenant switchboard.TenantID, id string, operator bool) (Removal, error) {
	var out Removal
	var allKeys []string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockTenant(tx, tenant); err != nil {
			return err
		}
		var err error
		if out.User, err = takeUser(tx, tenant, id); err != nil {
			return err
		}
		if out.User.Role == switchboard.RoleOwner {
			n, err := otherOwners(tx, tenant, id)
			if err != nil {
				return err
			}
			if n == 0 {
				return errLastOwner()
			}
		}
		var keys []APIKey
		if err := tx.Where("tenant_id = ? AND user_id = ?", tenant, id).Find(&keys).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("list keys of user %s: %w", id, err))
		}
		for _, k := range keys {
			if k.Operator && !k.Revoked() && !operator {
				return switchboard.Errorf(switchboard.CodeForbidden, "this user holds the deployment operator's API key; only the operator may remove them")
			}
			allKeys = append(allKeys, k.ID)
			if !k.Revoked() {
				out.RevokedKeys = append(out.RevokedKeys, k.ID)
			}
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		if err := tx.Model(&APIKey{}).Where("tenant_id = ? AND user_id = ? AND revoked_at IS NULL", tenant, id).Update("revoked_at", now).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("revoke keys of user %s: %w", id, err))
		}
		res := tx.Where("tenant_id = ? AND user_id = ?", tenant, id).Delete(&Session{})
		if res.Error != nil {
			return switchboard.Internal(fmt.Errorf("end sessions of user %s: %w", id, res.Error))
		}
		out.EndedSessions = res.RowsAffected
		if err := tx.Where("tenant_id = ? AND user_id = ?", tenant, id).Delete(&Invitation{}).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("drop password links of user %s: %w", id, err))
		}
		if err := dropLinksBeyond(tx, tenant, id, ""); err != nil {
			return err
		}
		if err := tx.Where("tenant_id = ? AND id = ?", tenant, id).Delete(&User{}).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("delete user %s: %w", id, err))
		}
		return nil
	})
	if err != nil {
		return Removal{}, asStoreError(err, "remove user "+id)
	}
	for _, k := range allKeys {
		s.cache.invalidateKey(k)
	}
	s.keysRevoked(tenant, out.RevokedKeys)
	for _, k := range out.RevokedKeys {
		events.PublishAfterCommit(ctx, s.feed, nil, events.Event{Kind: events.KeyRevoked, Tenant: tenant, ID: k})
	}
	events.PublishAfterCommit(ctx, s.feed, nil, events.Event{Kind: events.UserRemoved, Tenant: tenant, ID: id})
	return out, nil
}
