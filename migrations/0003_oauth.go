package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The structs below are migration 0003's frozen copies of the tables it creates. Never
// edit them: change the schema in a new migration with its own copies.

// oauthState0003 is one pending OAuth connect flow. ID is the SHA-256 of the state
// sent to the provider (never the state itself); BrowserHash is the SHA-256 of the
// cookie the browser that started the flow holds.
type oauthState0003 struct {
	ID          string     `gorm:"primaryKey;size:64"`
	TenantID    string     `gorm:"size:40;not null;index:idx_oauth_states_tenant_id"`
	Tenant      tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	UserID      string     `gorm:"size:40;not null"`
	User        user0001   `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	Provider    string     `gorm:"size:64;not null"`
	ClientID    string     `gorm:"size:255;not null"`
	BrowserHash string     `gorm:"size:64;not null"`
	RedirectURI string     `gorm:"size:2000;not null"`
	Sealed      []byte     `gorm:"not null"` // the PKCE verifier and the connection's options
	KeyID       string     `gorm:"size:128;not null"`
	ExpiresAt   time.Time  `gorm:"not null;index:idx_oauth_states_expires_at"`
	UsedAt      *time.Time ``
	CreatedAt   time.Time  `gorm:"not null"`
}

func (oauthState0003) TableName() string { return "oauth_states" }

// oauthApp0003 is a tenant's own OAuth app for a provider; its secret is sealed.
type oauthApp0003 struct {
	ID        string     `gorm:"primaryKey;size:40"`
	TenantID  string     `gorm:"size:40;not null;uniqueIndex:idx_oauth_apps_tenant_provider,priority:1"`
	Tenant    tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Provider  string     `gorm:"size:64;not null;uniqueIndex:idx_oauth_apps_tenant_provider,priority:2"`
	ClientID  string     `gorm:"size:255;not null"`
	Sealed    []byte     `gorm:"not null"`
	KeyID     string     `gorm:"size:128;not null"`
	CreatedAt time.Time  `gorm:"not null"`
	UpdatedAt time.Time  `gorm:"not null"`
}

func (oauthApp0003) TableName() string { return "oauth_apps" }

// up0003OAuth creates oauth_states and oauth_apps, and gives connections what the
// token lifecycle needs: whether they hold a refresh token, the last refresh failure,
// and the refresh claim (a lease one process holds while it refreshes, so processes
// sharing the database refresh a connection once).
func up0003OAuth(tx *gorm.DB) error {
	for _, model := range []any{&oauthState0003{}, &oauthApp0003{}} {
		if err := tx.Migrator().CreateTable(model); err != nil {
			return fmt.Errorf("create table for %T: %w", model, err)
		}
	}
	for _, stmt := range []string{
		`ALTER TABLE connections ADD COLUMN refreshable BOOLEAN NOT NULL DEFAULT FALSE`,
		`ALTER TABLE connections ADD COLUMN last_refresh_error VARCHAR(500) NOT NULL DEFAULT ''`,
		`ALTER TABLE connections ADD COLUMN refresh_claim VARCHAR(40) NOT NULL DEFAULT ''`,
		`ALTER TABLE connections ADD COLUMN refresh_claim_until TIMESTAMP NULL`,
		`CREATE INDEX idx_connections_expires_at ON connections (expires_at)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("alter connections: %w", err)
		}
	}
	return nil
}
