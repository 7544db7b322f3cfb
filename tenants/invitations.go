package tenants

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// Lifetimes of one-time links.
const (
	InvitationLifetime   = 7 * 24 * time.Hour
	PasswordLinkLifetime = 24 * time.Hour
)

// linkPrefix starts every invitation and password-link token.
const linkPrefix = "sbi_"

// Invitation is a one-time link: to join the tenant as a new user with Email and Role
// (UserID nil), or to set an existing user's password (UserID set). Only the token's
// SHA-256 is kept; the link is shown once, to whoever made it.
type Invitation struct {
	ID        string               `gorm:"primaryKey;size:40" json:"id"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null" json:"-"`
	UserID    *string              `gorm:"size:40" json:"user_id,omitempty"`
	Email     string               `gorm:"size:254;not null" json:"email"`
	Role      switchboard.Role     `gorm:"size:16;not null" json:"role"`
	TokenHash string               `gorm:"size:64;not null" json:"-"`
	CreatedBy string               `gorm:"size:64;not null" json:"created_by"`
	CreatedAt time.Time            `gorm:"not null" json:"created_at"`
	ExpiresAt time.Time            `gorm:"not null" json:"expires_at"`
	UsedAt    *time.Time           `json:"used_at,omitempty"`
}

// TableName is the table invitations live in.
func (Invitation) TableName() string { return "invitations" }

// CreateInvitation invites email to join the tenant with role. createdBy is the
// inviting principal's ID, for the record. The token is returned once.
func (s *Store) CreateInvitation(ctx context.Context, tenant switchboard.TenantID, createdBy, email string, role switchboard.Role) (string, Invitation, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return "", Invitation{}, err
	}
	switch role {
	case switchboard.RoleOwner, switchboard.RoleAdmin, switchboard.RoleMember:
	default:
		return "", Invitation{}, switchboard.Invalid("role", "must be owner, admin or member")
	}
	var n int64
	if err := s.db.WithContext(ctx).Model(&User{}).Where("tenant_id = ? AND email = ?", tenant, email).Count(&n).Error; err != nil {
		return "", Invitation{}, switchboard.Internal(fmt.Errorf("invite: find user: %w", err))
	}
	if n > 0 {
		return "", Invitation{}, &switchboard.Error{Code: switchboard.CodeConflict, Field: "email", Message: "a user with this email already exists in the tenant"}
	}
	// No second invitation for the same person: the first link would still work beside
	// the new one, and nobody would know which was sent.
	var pending Invitation
	err = s.db.WithContext(ctx).Where("tenant_id = ? AND email = ? AND user_id IS NULL AND used_at IS NULL AND expires_at > ?", tenant, email, time.Now().UTC()).
		Order("created_at DESC").Limit(1).Find(&pending).Error
	if err != nil {
		return "", Invitation{}, switchboard.Internal(fmt.Errorf("invite: find pending invitation: %w", err))
	}
	if pending.ID != "" {
		return "", Invitation{}, &switchboard.Error{Code: switchboard.CodeConflict, Field: "email", Message: fmt.Sprintf(
			"%s already has a pending invitation (%s, as %s, until %s): resend it for a new link, or revoke it first",
			email, pending.ID, pending.Role, pending.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))}
	}
	return createLink(s.db.WithContext(ctx), Invitation{TenantID: tenant, Email: email, Role: role, CreatedBy: createdBy}, InvitationLifetime)
}

// ResendInvitation gives one of the tenant's pending invitations a new link, valid for
// InvitationLifetime from now, made by resentBy: the old link stops working, and the
// invitation keeps its id, email and role. A used, unknown or other tenant's
// invitation is not found.
func (s *Store) ResendInvitation(ctx context.Context, tenant switchboard.TenantID, id, resentBy string) (string, Invitation, error) {
	token := linkPrefix + switchboard.RandomToken(32)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var inv Invitation
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("tenant_id = ? AND id = ? AND user_id IS NULL AND used_at IS NULL", tenant, id).Take(&inv).Error; err != nil {
			return notFound(err, "invitation", "read invitation "+id)
		}
		res := tx.Model(&Invitation{}).Where("tenant_id = ? AND id = ? AND used_at IS NULL", tenant, id).
			Updates(map[string]any{"token_hash": hashToken(token), "created_by": resentBy, "created_at": now, "expires_at": now.Add(InvitationLifetime)})
		if res.Error != nil {
			return switchboard.Internal(fmt.Errorf("resend invitation %s: %w", id, res.Error))
		}
		if res.RowsAffected == 0 {
			return switchboard.NotFound("invitation") // used meanwhile
		}
		return nil
	})
	if err != nil {
		return "", Invitation{}, asStoreError(err, "resend invitation "+id)
	}
	inv.TokenHash, inv.CreatedBy, inv.CreatedAt, inv.ExpiresAt = hashToken(token), resentBy, now, now.Add(InvitationLifetime)
	return token, inv, nil
}

// PasswordLink makes a one-time link that sets the password of one of the tenant's
// existing users (the first admin's, printed at first start, or a forgotten one). The
// user's older unused password links stop working: only the newest one does.
func (s *Store) PasswordLink(ctx context.Context, tenant switchboard.TenantID, userID, createdBy string) (string, Invitation, error) {
	var (
		token string
		inv   Invitation
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := takeUser(tx, tenant, userID)
		if err != nil {
			return err
		}
		if err := tx.Where("tenant_id = ? AND user_id = ? AND used_at IS NULL", tenant, u.ID).Delete(&Invitation{}).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("drop older password links of user %s: %w", u.ID, err))
		}
		token, inv, err = createLink(tx, Invitation{TenantID: tenant, UserID: &u.ID, Email: u.Email, Role: u.Role, CreatedBy: createdBy}, PasswordLinkLifetime)
		return err
	})
	if err != nil {
		return "", Invitation{}, asStoreError(err, "make password link")
	}
	return token, inv, nil
}

// PasswordLinkByEmail is PasswordLink for the user of the tenant (named by its slug)
// with that email: the operator's command-line way to a first password.
func (s *Store) PasswordLinkByEmail(ctx context.Context, tenantSlug, email, createdBy string) (string, Invitation, error) {
	t, err := s.TenantBySlug(ctx, tenantSlug)
	if err != nil {
		return "", Invitation{}, err
	}
	email, err = normalizeEmail(email)
	if err != nil {
		return "", Invitation{}, err
	}
	var u User
	err = s.db.WithContext(ctx).Where("tenant_id = ? AND email = ?", t.ID, email).Take(&u).Error
	if err != nil {
		return "", Invitation{}, notFound(err, "user", "find user by email")
	}
	return s.PasswordLink(ctx, t.ID, u.ID, createdBy)
}

func createLink(db *gorm.DB, inv Invitation, lifetime time.Duration) (string, Invitation, error) {
	token := linkPrefix + switchboard.RandomToken(32)
	now := time.Now().UTC().Truncate(time.Microsecond)
	inv.ID = switchboard.NewID("inv")
	inv.TokenHash = hashToken(token)
	inv.CreatedAt = now
	inv.ExpiresAt = now.Add(lifetime)
	if err := db.Create(&inv).Error; err != nil {
		return "", Invitation{}, switchboard.Internal(fmt.Errorf("create invitation: %w", err))
	}
	return token, inv, nil
}

// ListInvitations returns the tenant's invitations that are neither used nor expired,
// newest first. Password links are not listed.
func (s *Store) ListInvitations(ctx context.Context, tenant switchboard.TenantID) ([]Invitation, error) {
	var list []Invitation
	err := s.db.WithContext(ctx).
		Where("tenant_id = ? AND user_id IS NULL AND used_at IS NULL AND expires_at > ?", tenant, time.Now().UTC()).
		Order("created_at DESC, id DESC").Find(&list).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list invitations: %w", err))
	}
	return list, nil
}

// RevokeInvitation deletes one of the tenant's pending invitations, so its link stops
// working, and returns it as it was. A used, unknown or other tenant's invitation (and a
// password link, which is not listed as an invitation) is not found.
func (s *Store) RevokeInvitation(ctx context.Context, tenant switchboard.TenantID, id string) (Invitation, error) {
	var inv Invitation
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Where("tenant_id = ? AND id = ? AND user_id IS NULL AND used_at IS NULL", tenant, id).Take(&inv).Error
		if err != nil {
			return notFound(err, "invitation", "read invitation "+id)
		}
		res := tx.Where("tenant_id = ? AND id = ? AND used_at IS NULL", tenant, id).Delete(&Invitation{})
		if res.Error != nil {
			return switchboard.Internal(fmt.Errorf("revoke invitation %s: %w", id, res.Error))
		}
		if res.RowsAffected == 0 {
			return switchboard.NotFound("invitation") // used meanwhile
		}
		return nil
	})
	if err != nil {
		return Invitation{}, asStoreError(err, "revoke invitation "+id)
	}
	return inv, nil
}

// creatorPrefix starts the CreatedBy of links a user made (a principal's ID); links
// the operator or the first start made name those instead.
const creatorPrefix = "user:"

// dropLinksBeyond deletes the unused links that user (as their creator) made and may no
// longer make with role: all of them for a member or a removed user (role ""), the
// owner invitations for an admin. It runs when a user is demoted or removed, so that a
// link outlives neither its creator nor their power to grant what it grants.
func dropLinksBeyond(tx *gorm.DB, tenant switchboard.TenantID, userID string, role switchboard.Role) error {
	q := tx.Where("tenant_id = ? AND created_by = ? AND used_at IS NULL", tenant, creatorPrefix+userID)
	switch role {
	case switchboard.RoleOwner:
		return nil
	case switchboard.RoleAdmin:
		q = q.Where("role = ?", switchboard.RoleOwner)
	}
	if err := q.Delete(&Invitation{}).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("drop the links user %s made: %w", userID, err))
	}
	return nil
}

// mayGrant reports whether a user of role may make a link that grants granted:
// owners grant every role, admins admin and member, members none.
func mayGrant(role, granted switchboard.Role) bool {
	switch role {
	case switchboard.RoleOwner:
		return true
	case switchboard.RoleAdmin:
		return granted != switchboard.RoleOwner
	}
	return false
}

// checkCreator refuses a link whose creator, a user, is gone or may no longer grant
// its role: the demotion or removal dropped such links already, and this catches one
// made while that change was committing.
func checkCreator(tx *gorm.DB, inv Invitation) error {
	id, ok := strings.CutPrefix(inv.CreatedBy, creatorPrefix)
	if !ok {
		return nil
	}
	creator, err := takeUser(tx, inv.TenantID, id)
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return errBadLink()
	}
	if err != nil {
		return err
	}
	if !mayGrant(creator.Role, inv.Role) {
		return errBadLink()
	}
	return nil
}

// errBadLink is the one answer to every unusable link: malformed, unknown, used or expired.
func errBadLink() error {
	return &switchboard.Error{Code: switchboard.CodeNotFound, Message: "this link is not valid: it was already used, it expired, or it was mistyped; ask an admin for a new one"}
}

// LinkTenant is what a link's page shows before it is used: which tenant and which
// email it is for.
type LinkTenant struct {
	TenantSlug string
	TenantName string
	Email      string
	NewUser    bool
}

// Link returns what a valid, unused link is for.
func (s *Store) Link(ctx context.Context, token string) (LinkTenant, error) {
	db := s.db.WithContext(ctx)
	inv, err := findLink(db, token)
	if err != nil {
		return LinkTenant{}, err
	}
	if err := checkCreator(db, inv); err != nil {
		return LinkTenant{}, err
	}
	t, err := s.Tenant(ctx, inv.TenantID)
	if err != nil {
		return LinkTenant{}, err
	}
	return LinkTenant{TenantSlug: t.Slug, TenantName: t.Name, Email: inv.Email, NewUser: inv.UserID == nil}, nil
}

func findLink(db *gorm.DB, token string) (Invitation, error) {
	if len(token) > 128 {
		return Invitation{}, errBadLink()
	}
	var inv Invitation
	err := db.Where("token_hash = ? AND used_at IS NULL", hashToken(token)).Take(&inv).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Invitation{}, errBadLink()
	case err != nil:
		return Invitation{}, switchboard.Internal(fmt.Errorf("find invitation: %w", err))
	}
	if !time.Now().Before(inv.ExpiresAt) {
		return Invitation{}, errBadLink()
	}
	return inv, nil
}

// UseLink uses a one-time link: it creates the invited user (or finds the user whose
// password the link sets), sets the password, marks the link used and starts a session,
// all in one transaction. It returns the session token, once, and the user. Where
// the tenant turned passwords off (SetPasswordPolicy) it refuses with forbidden and
// leaves the link unused.
func (s *Store) UseLink(ctx context.Context, token, password string) (string, Session, User, error) {
	if err := checkPassword(password); err != nil {
		return "", Session{}, User{}, err
	}
	// Where the tenant turned passwords off, the person signs in with single sign-on
	// instead (which honours a pending invitation); asked outside the transaction, as
	// the policy reads the database itself.
	if inv, err := findLink(s.db.WithContext(ctx), token); err == nil {
		if err := s.passwordsAllowed(ctx, inv.TenantID); err != nil {
			return "", Session{}, User{}, err
		}
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return "", Session{}, User{}, err
	}
	var (
		user User
		slug string
	)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		inv, err := findLink(tx, token)
		if err != nil {
			return err
		}
		if err := checkCreator(tx, inv); err != nil {
			return err
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		res := tx.Model(&Invitation{}).Where("id = ? AND used_at IS NULL", inv.ID).Update("used_at", now)
		if res.Error != nil {
			return switchboard.Internal(fmt.Errorf("use invitation %s: %w", inv.ID, res.Error))
		}
		if res.RowsAffected == 0 {
			return errBadLink() // a concurrent use won
		}
		if inv.UserID == nil {
			if user, err = createUser(tx, inv.TenantID, inv.Email, inv.Role); err != nil {
				return err
			}
		} else if err := tx.Where("tenant_id = ? AND id = ?", inv.TenantID, *inv.UserID).Take(&user).Error; err != nil {
			return notFound(err, "user", "find invited user")
		}
		var slugs []string
		if err := tx.Model(&Tenant{}).Where("id = ?", inv.TenantID).Pluck("slug", &slugs).Error; err != nil {
			return switchboard.Internal(fmt.Errorf("use invitation %s: find tenant: %w", inv.ID, err))
		}
		if len(slugs) != 1 {
			return switchboard.NotFound("tenant")
		}
		slug = slugs[0]
		return setPassword(tx, inv.TenantID, user.ID, hash)
	})
	if err != nil {
		return "", Session{}, User{}, asStoreError(err, "use invitation")
	}
	// A new password ends any lock on the account from guesses at the old one.
	s.signIns.Reset(signInAccount(slug, user.Email))
	tok, ses, err := s.startSession(ctx, user.TenantID, user.ID)
	if err != nil {
		return "", Session{}, User{}, err
	}
	return tok, ses, user, nil
}
