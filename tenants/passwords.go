package tenants

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
)

// Password bounds. bcrypt reads at most 72 bytes, so longer passwords are refused
// rather than silently cut.
const (
	MinPasswordLength = 10
	maxPasswordBytes  = 72
	// DefaultPasswordCost is the bcrypt cost of new password hashes.
	DefaultPasswordCost = 11
)

// checkPassword says what is wrong with a new password, naming the field.
func checkPassword(pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < MinPasswordLength:
		return switchboard.Invalid("password", fmt.Sprintf("must be at least %d characters", MinPasswordLength))
	case len(pw) > maxPasswordBytes:
		return switchboard.Invalid("password", fmt.Sprintf("must be at most %d bytes", maxPasswordBytes))
	case strings.TrimSpace(pw) == "":
		return switchboard.Invalid("password", "must not be only spaces")
	}
	return nil
}

// SetPasswordCost sets the bcrypt cost of the hashes this store makes from now on (4 to
// 31; DefaultPasswordCost otherwise). Tests lower it: hashes of any cost verify.
func (s *Store) SetPasswordCost(cost int) {
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		cost = DefaultPasswordCost
	}
	s.pwCost.Store(int32(cost))
}

func (s *Store) hashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), int(s.pwCost.Load()))
	if err != nil {
		return "", switchboard.Internal(fmt.Errorf("hash password: %w", err))
	}
	return string(h), nil
}

// SetPassword sets one of the tenant's users' password (bcrypt) and ends the user's
// other browser sessions.
func (s *Store) SetPassword(ctx context.Context, tenant switchboard.TenantID, userID, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	h, err := s.hashPassword(password)
	if err != nil {
		return err
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return setPassword(tx, tenant, userID, h)
	})
}

func setPassword(tx *gorm.DB, tenant switchboard.TenantID, userID, hash string) error {
	res := tx.Model(&User{}).Where("tenant_id = ? AND id = ?", tenant, userID).Update("password_hash", hash)
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("set password of user %s: %w", userID, res.Error))
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("user")
	}
	if err := tx.Where("tenant_id = ? AND user_id = ?", tenant, userID).Delete(&Session{}).Error; err != nil {
		return switchboard.Internal(fmt.Errorf("end sessions of user %s: %w", userID, err))
	}
	return nil
}

// dummyHash is compared against when no user matches, so that a sign-in takes as long
// for an unknown email as for a wrong password: a hash at the store's cost, made once.
func (s *Store) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte(switchboard.RandomToken(16)), int(s.pwCost.Load()))
		if err == nil {
			s.dummy = h
		}
	})
	return s.dummy
}

// verifyPassword checks a password against the user's stored hash (nil or "" when
// unset, which always fails after the same work).
func (s *Store) verifyPassword(stored *string, pw string) bool {
	s.pwChecks.Add(1)
	if stored == nil || *stored == "" {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(*stored), []byte(pw)) == nil
}

// errBadSignIn is the one answer to every failed sign-in: unknown workspace, unknown
// email, no password set, or a wrong password.
func errBadSignIn() error {
	return &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "the workspace, email or password is wrong; check them, or ask an admin for a new invitation link"}
}

// ConfirmPassword checks the password of one of the tenant's users, who is signed in
// already and confirms who they are before a sensitive change (linking their identity
// provider account). It is throttled like SignIn, in the same account's attempts, and
// fails with the same unauthorized error for a wrong password or none set; a tenant
// whose password policy turned passwords off refuses with forbidden.
func (s *Store) ConfirmPassword(ctx context.Context, tenant switchboard.TenantID, userID, password string) error {
	var row struct {
		Slug         string
		Email        string
		PasswordHash *string
	}
	err := s.db.WithContext(ctx).Table("users AS u").Select("t.slug, u.email, u.password_hash").
		Joins("JOIN tenants t ON t.id = u.tenant_id").Where("u.tenant_id = ? AND u.id = ?", tenant, userID).Take(&row).Error
	if err != nil {
		return notFound(err, "user", "confirm password: read user "+userID)
	}
	attempt, err := s.signIns.Begin(ctx, signInAccount(row.Slug, row.Email), limits.SourceFrom(ctx))
	if err != nil {
		return err
	}
	if err := s.passwordsAllowed(ctx, tenant); err != nil {
		attempt.Abandoned()
		return err
	}
	if !s.verifyPassword(row.PasswordHash, password) {
		attempt.Failed()
		return &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "the password is wrong, or you have none: set one with an invitation link from an admin"}
	}
	attempt.Succeeded()
	return nil
}
