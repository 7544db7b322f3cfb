package tenants

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// PasswordPolicy says whether a tenant's people may sign in with a password: false
// when the tenant signs in with its identity provider only (package identity keeps
// that setting). An error refuses the sign-in as internal.
type PasswordPolicy func(ctx context.Context, tenant switchboard.TenantID) (allowed bool, err error)

// SetPasswordPolicy makes SignIn and UseLink ask p before they check or set a
// password. Call it once, while wiring; without it passwords are always allowed.
func (s *Store) SetPasswordPolicy(p PasswordPolicy) { s.passwords = p }

// errPasswordsOff refuses a password where the tenant turned passwords off.
func errPasswordsOff() error {
	return &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this workspace signs in with single sign-on only: use Continue with single sign-on"}
}

// passwordsAllowed asks the policy about the tenant.
func (s *Store) passwordsAllowed(ctx context.Context, tenant switchboard.TenantID) error {
	if s.passwords == nil {
		return nil
	}
	ok, err := s.passwords(ctx, tenant)
	if err != nil {
		return switchboard.Internal(fmt.Errorf("read the password policy of tenant %s: %w", tenant, err))
	}
	if !ok {
		return errPasswordsOff()
	}
	return nil
}

// passwordsAllowedBySlug is passwordsAllowed for the tenant a slug names; an unknown
// slug is left to the caller's own lookup.
func (s *Store) passwordsAllowedBySlug(ctx context.Context, slug string) error {
	if s.passwords == nil {
		return nil
	}
	var ids []switchboard.TenantID
	if err := s.db.WithContext(ctx).Model(&Tenant{}).Where("slug = ?", slug).Limit(1).Pluck("id", &ids).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("find tenant %s: %w", slug, err))
	}
	if len(ids) == 0 {
		return nil
	}
	return s.passwordsAllowed(ctx, ids[0])
}

// SSOSignIn is how a single sign-on ended: the session token (shown once), the user,
// and whether the user was created by it (JoinedBy says how: "domain" or "invitation").
type SSOSignIn struct {
	Token    string
	Session  Session
	User     User
	JoinedBy string
}

// errNotAMember refuses a single sign-on by someone the tenant does not know and may
// not let in.
func errNotAMember() error {
	return &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this email is not a member of the workspace and its domain may not join"}
}

// SignInSSO starts a session for the person the tenant's identity provider vouched
// for (the email is verified there). A user of the tenant with that email is signed
// in as they are; otherwise a pending invitation for the email makes them a user with
// the invitation's role (and is used up); otherwise, when mayJoin (the email's domain
// is one the tenant allows), they join as a member. Anyone else is refused (forbidden).
// Before the session starts, admit (when not nil) sees the user and how they joined
// ("" for an existing user): an error from it refuses the sign-in and is returned.
func (s *Store) SignInSSO(ctx context.Context, tenant switchboard.TenantID, email string, mayJoin bool, admit func(u User, joinedBy string) error) (SSOSignIn, error) {
	mail, err := normalizeEmail(email)
	if err != nil {
		return SSOSignIn{}, err
	}
	var out SSOSignIn
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Where("tenant_id = ? AND email = ?", tenant, mail).Take(&out.User).Error
		if err == nil {
			return nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return switchboard.Internal(fmt.Errorf("sso sign-in: find user: %w", err))
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		var inv Invitation
		err = tx.Where("tenant_id = ? AND email = ? AND user_id IS NULL AND used_at IS NULL AND expires_at > ?", tenant, mail, now).
			Order("created_at DESC").Limit(1).Find(&inv).Error
		if err != nil {
			return switchboard.Internal(fmt.Errorf("sso sign-in: find invitation: %w", err))
		}
		role := switchboard.RoleMember
		switch {
		case inv.ID != "":
			if err := checkCreator(tx, inv); err != nil {
				return err
			}
			res := tx.Model(&Invitation{}).Where("id = ? AND used_at IS NULL", inv.ID).Update("used_at", now)
			if res.Error != nil {
				return switchboard.Internal(fmt.Errorf("use invitation %s: %w", inv.ID, res.Error))
			}
			if res.RowsAffected == 0 {
				return errBadLink() // a concurrent use won
			}
			role, out.JoinedBy = inv.Role, "invitation"
		case mayJoin:
			out.JoinedBy = "domain"
		default:
			return errNotAMember()
		}
		out.User, err = createUser(tx, tenant, mail, role)
		return err
	})
	if err != nil {
		return SSOSignIn{}, asStoreError(err, "sso sign-in")
	}
	if admit != nil {
		if err := admit(out.User, out.JoinedBy); err != nil {
			return SSOSignIn{}, err
		}
	}
	out.Token, out.Session, err = s.startSession(ctx, tenant, out.User.ID)
	if err != nil {
		return SSOSignIn{}, err
	}
	return out, nil
}
