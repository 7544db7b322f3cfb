package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ssoConfig0021 is a tenant's single sign-on: its OpenID provider (issuer), the
// client Switchboard is registered as there (the secret sealed by the keyring, bound
// to the tenant), the email domains whose people join on their first sign-in
// (space-separated), and whether the tenant's people may still sign in with a
// password. One per tenant.
type ssoConfig0021 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	TenantID       string    `gorm:"size:40;not null;uniqueIndex"`
	Issuer         string    `gorm:"size:2048;not null"`
	ClientID       string    `gorm:"size:255;not null"`
	Sealed         []byte    `gorm:"not null"`
	KeyID          string    `gorm:"size:128;not null"`
	AllowedDomains string    `gorm:"type:text;not null"`
	PasswordsOff   bool      `gorm:"not null"`
	CreatedAt      time.Time `gorm:"not null"`
	UpdatedAt      time.Time `gorm:"not null"`
}

func (ssoConfig0021) TableName() string { return "sso_configs" }

// ssoLogin0021 is a single sign-on under way: the state (as its SHA-256) the browser
// brings back, the nonce the ID token must carry, the PKCE verifier (sealed), and where
// the person goes afterwards. Used once; expires in minutes.
type ssoLogin0021 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	TenantID  string    `gorm:"size:40;not null"`
	StateHash string    `gorm:"size:64;not null;uniqueIndex"`
	Nonce     string    `gorm:"size:64;not null"`
	Sealed    []byte    `gorm:"not null"`
	KeyID     string    `gorm:"size:128;not null"`
	Next      string    `gorm:"size:2048;not null"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

func (ssoLogin0021) TableName() string { return "sso_logins" }

// up0021SSO creates the tables of single sign-on for people (OpenID Connect).
func up0021SSO(tx *gorm.DB) error {
	for _, m := range []any{&ssoConfig0021{}, &ssoLogin0021{}} {
		if err := tx.Migrator().CreateTable(m); err != nil {
			return fmt.Errorf("create %T: %w", m, err)
		}
	}
	return nil
}
