package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The structs below are migration 0006's frozen copies of the tables it creates. Never
// edit them: change the schema in a new migration with its own copies.

// webSession0006 is a signed-in browser: the cookie's SHA-256, never the cookie.
type webSession0006 struct {
	ID         string     `gorm:"primaryKey;size:40"`
	TenantID   string     `gorm:"size:40;not null;index:idx_web_sessions_tenant_id"`
	Tenant     tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	UserID     string     `gorm:"size:40;not null;index:idx_web_sessions_user_id"`
	User       user0001   `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	TokenHash  string     `gorm:"size:64;not null;uniqueIndex:idx_web_sessions_token_hash"`
	CreatedAt  time.Time  `gorm:"not null"`
	ExpiresAt  time.Time  `gorm:"not null"`
	LastSeenAt time.Time  `gorm:"not null"`
}

func (webSession0006) TableName() string { return "web_sessions" }

// invitation0006 is a one-time link: an invitation to join a tenant (UserID empty) or
// a link to set an existing user's password (UserID set). Only the token's SHA-256 is kept.
type invitation0006 struct {
	ID        string     `gorm:"primaryKey;size:40"`
	TenantID  string     `gorm:"size:40;not null;index:idx_invitations_tenant_id"`
	Tenant    tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	UserID    *string    `gorm:"size:40"`
	Email     string     `gorm:"size:254;not null"`
	Role      string     `gorm:"size:16;not null"`
	TokenHash string     `gorm:"size:64;not null;uniqueIndex:idx_invitations_token_hash"`
	CreatedBy string     `gorm:"size:64;not null"`
	CreatedAt time.Time  `gorm:"not null"`
	ExpiresAt time.Time  `gorm:"not null"`
	UsedAt    *time.Time ``
}

func (invitation0006) TableName() string { return "invitations" }

// up0006Web creates the browser sessions and the one-time invitation and password
// links of the builder UI. Passwords live in users.password_hash (migration 0001).
func up0006Web(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&webSession0006{}, &invitation0006{}); err != nil {
		return fmt.Errorf("create web_sessions and invitations: %w", err)
	}
	return nil
}
