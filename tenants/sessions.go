package tenants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
)

// SessionLifetime is how long a browser stays signed in.
const SessionLifetime = 12 * time.Hour

// SessionCookie names the cookie that holds a browser's session token.
const SessionCookie = "switchboard_session"

// sessionPrefix starts every session token, so that a leaked one is recognisable.
const sessionPrefix = "sbs_"

// Session is a signed-in browser. The token (the cookie's value) is shown once, when
// the session starts; the hub keeps its SHA-256.
type Session struct {
	ID         string               `gorm:"primaryKey;size:40"`
	TenantID   switchboard.TenantID `gorm:"size:40;not null"`
	UserID     string               `gorm:"size:40;not null"`
	TokenHash  string               `gorm:"size:64;not null"`
	CreatedAt  time.Time            `gorm:"not null"`
	ExpiresAt  time.Time            `gorm:"not null"`
	LastSeenAt time.Time            `gorm:"not null"`
}

// TableName is the table sessions live in.
func (Session) TableName() string { return "web_sessions" }

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CSRFToken is the anti-forgery token of a session: pages carry it and every request
// that changes something sends it back (a form field or the X-CSRF-Token header). It is
// derived from the session token, which another site can neither read nor guess.
func CSRFToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("switchboard csrf\x00" + sessionToken))
	return hex.EncodeToString(sum[:16])
}

// SignIn checks a user's email and password in the tenant the slug names, and starts a
// session. It returns the session token, shown this once. Every failure answers the
// same unauthorized error, whichever part was wrong; a tenant whose password policy
// (SetPasswordPolicy) turned passwords off refuses with forbidden. Attempts are throttled per
// account and per client address (limits.SourceFrom(ctx)): a refused one answers
// rate_limited, saying when to try again, without checking the password.
func (s *Store) SignIn(ctx context.Context, tenantSlug, email, password string) (string, Session, error) {
	slug, mail := strings.TrimSpace(tenantSlug), strings.ToLower(strings.TrimSpace(email))
	attempt, err := s.signIns.Begin(ctx, signInAccount(slug, mail), limits.SourceFrom(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return "", Session{}, &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "the sign-in was cancelled", Err: err}
		}
		return "", Session{}, err
	}
	// A tenant that signs in with its identity provider only refuses every password,
	// before anything is checked (whether the email exists is not told either).
	if err := s.passwordsAllowedBySlug(ctx, slug); err != nil {
		attempt.Abandoned()
		return "", Session{}, err
	}
	var row struct {
		ID           string
		TenantID     switchboard.TenantID
		PasswordHash *string
	}
	err = s.db.WithContext(ctx).Table("users AS u").
		Select("u.id, u.tenant_id, u.password_hash").
		Joins("JOIN tenants t ON t.id = u.tenant_id").
		Where("t.slug = ? AND u.email = ?", slug, mail).
		Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		s.verifyPassword(nil, password)
		attempt.Failed()
		return "", Session{}, errBadSignIn()
	case err != nil:
		attempt.Abandoned()
		return "", Session{}, switchboard.Internal(fmt.Errorf("sign in: find user: %w", err))
	}
	if !s.verifyPassword(row.PasswordHash, password) {
		attempt.Failed()
		return "", Session{}, errBadSignIn()
	}
	attempt.Succeeded()
	return s.startSession(ctx, row.TenantID, row.ID)
}

// signInAccount names an account for the sign-in throttle: the tenant's slug and the
// email, as SignIn normalizes them (whether or not such a user exists).
func signInAccount(slug, email string) string { return slug + "\x00" + email }

// startSession creates a session for one of the tenant's users.
func (s *Store) startSession(ctx context.Context, tenant switchboard.TenantID, userID string) (string, Session, error) {
	token := sessionPrefix + switchboard.RandomToken(32)
	now := time.Now().UTC().Truncate(time.Microsecond)
	ses := Session{
		ID: switchboard.NewID("ses"), TenantID: tenant, UserID: userID, TokenHash: hashToken(token),
		CreatedAt: now, ExpiresAt: now.Add(SessionLifetime), LastSeenAt: now,
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The user's ended sessions go as a new one starts, so the table does not grow.
		if err := tx.Where("tenant_id = ? AND user_id = ? AND expires_at <= ?", tenant, userID, now).Delete(&Session{}).Error; err != nil {
			return err
		}
		return tx.Create(&ses).Error
	})
	if err != nil {
		return "", Session{}, switchboard.Internal(fmt.Errorf("start session: %w", err))
	}
	return token, ses, nil
}

// errNoSession is the one answer to every bad session token: malformed, unknown,
// expired or ended.
func errNoSession() error {
	return &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "you are signed out; sign in again"}
}

// AuthenticateSession returns the principal a session token stands for: the user, with
// their role as it is now. The principal's KeyID is the session's ID.
func (s *Store) AuthenticateSession(ctx context.Context, token string) (switchboard.Principal, error) {
	if !strings.HasPrefix(token, sessionPrefix) || len(token) > 128 {
		return switchboard.Principal{}, errNoSession()
	}
	var row struct {
		ID        string
		TenantID  switchboard.TenantID
		UserID    string
		ExpiresAt time.Time
		Role      switchboard.Role
		Slug      string
	}
	err := s.db.WithContext(ctx).Table("web_sessions AS s").
		Select("s.id, s.tenant_id, s.user_id, s.expires_at, u.role, t.slug").
		Joins("JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id").
		Joins("JOIN tenants t ON t.id = s.tenant_id").
		Where("s.token_hash = ?", hashToken(token)).
		Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return switchboard.Principal{}, errNoSession()
	case err != nil:
		return switchboard.Principal{}, switchboard.Internal(fmt.Errorf("authenticate session: %w", err))
	}
	now := time.Now()
	if !now.Before(row.ExpiresAt) {
		return switchboard.Principal{}, errNoSession()
	}
	operator, err := s.holdsOperatorKey(ctx, row.TenantID, row.UserID, now)
	if err != nil {
		return switchboard.Principal{}, err
	}
	return switchboard.Principal{
		TenantID: row.TenantID, TenantSlug: row.Slug, Kind: switchboard.PrincipalUser,
		UserID: row.UserID, Role: row.Role, KeyID: row.ID, Operator: operator,
	}, nil
}

// holdsOperatorKey reports whether the user holds a live operator key of their own:
// the person who is the deployment's operator signs in to the UI as one.
func (s *Store) holdsOperatorKey(ctx context.Context, tenant switchboard.TenantID, userID string, now time.Time) (bool, error) {
	var keys []APIKey
	err := s.db.WithContext(ctx).Select("id", "expires_at").
		Where("tenant_id = ? AND user_id = ? AND agent_id IS NULL AND operator = ? AND revoked_at IS NULL", tenant, userID, true).
		Find(&keys).Error
	if err != nil {
		return false, switchboard.Internal(fmt.Errorf("authenticate session: read operator keys: %w", err))
	}
	for _, k := range keys {
		if !k.Expired(now) {
			return true, nil
		}
	}
	return false, nil
}

// SignOut ends the session the token names. Ending an unknown session is a no-op.
func (s *Store) SignOut(ctx context.Context, token string) error {
	if err := s.db.WithContext(ctx).Where("token_hash = ?", hashToken(token)).Delete(&Session{}).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("sign out: %w", err))
	}
	return nil
}
