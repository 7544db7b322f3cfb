package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// oauthClient0016 is an MCP client registered by dynamic client registration (RFC
// 7591). Clients are the deployment's, not a tenant's: a client registers before anyone
// says which workspace it is for. A confidential client's secret is kept as its SHA-256.
type oauthClient0016 struct {
	ID           string    `gorm:"primaryKey;size:40"`
	Name         string    `gorm:"size:200;not null"`
	RedirectURIs string    `gorm:"type:text;not null"`
	AuthMethod   string    `gorm:"size:32;not null"`
	SecretHash   string    `gorm:"size:64;not null"`
	ClientURI    string    `gorm:"size:2048;not null"`
	LogoURI      string    `gorm:"size:2048;not null"`
	CreatedAt    time.Time `gorm:"not null"`
}

func (oauthClient0016) TableName() string { return "oauth_clients" }

// oauthCode0016 is an authorization code (stored as its SHA-256) with everything the
// person consented to; exchanging it creates the grant, whose id it then keeps so a
// replay can revoke that grant.
type oauthCode0016 struct {
	ID          string     `gorm:"primaryKey;size:40"`
	TenantID    string     `gorm:"size:40;not null"`
	Hash        string     `gorm:"size:64;not null;uniqueIndex"`
	ClientID    string     `gorm:"size:2048;not null"`
	ClientName  string     `gorm:"size:200;not null"`
	RedirectURI string     `gorm:"size:2048;not null"`
	Challenge   string     `gorm:"size:128;not null"`
	Resource    string     `gorm:"size:2048;not null"`
	Scope       string     `gorm:"size:200;not null"`
	UserID      string     `gorm:"size:40;not null"`
	AgentID     string     `gorm:"size:40;not null"`
	ConsentedBy string     `gorm:"size:40;not null"`
	ExpiresAt   time.Time  `gorm:"not null;index"`
	UsedAt      *time.Time ``
	GrantID     string     `gorm:"size:40;not null"`
	CreatedAt   time.Time  `gorm:"not null"`
}

func (oauthCode0016) TableName() string { return "oauth_codes" }

// oauthGrant0016 is what a person allowed an MCP client: one MCP URL (resource) of a
// tenant, as the person (agent_id "") or as one agent, until revoked.
type oauthGrant0016 struct {
	ID          string     `gorm:"primaryKey;size:40"`
	TenantID    string     `gorm:"size:40;not null;index:idx_oauth_grants_tenant"`
	ClientID    string     `gorm:"size:2048;not null"`
	ClientName  string     `gorm:"size:200;not null"`
	Resource    string     `gorm:"size:2048;not null"`
	Scope       string     `gorm:"size:200;not null"`
	UserID      string     `gorm:"size:40;not null"`
	AgentID     string     `gorm:"size:40;not null"`
	ConsentedBy string     `gorm:"size:40;not null"`
	CreatedAt   time.Time  `gorm:"not null"`
	LastUsedAt  *time.Time ``
	RevokedAt   *time.Time ``
}

func (oauthGrant0016) TableName() string { return "oauth_grants" }

// oauthRefreshToken0016 is a refresh token (stored as its SHA-256). Each is used once:
// using it replaces it, and using it again revokes its grant.
type oauthRefreshToken0016 struct {
	ID        string     `gorm:"primaryKey;size:40"`
	TenantID  string     `gorm:"size:40;not null"`
	GrantID   string     `gorm:"size:40;not null;index"`
	Hash      string     `gorm:"size:64;not null;uniqueIndex"`
	CreatedAt time.Time  `gorm:"not null"`
	ExpiresAt time.Time  `gorm:"not null"`
	UsedAt    *time.Time ``
}

func (oauthRefreshToken0016) TableName() string { return "oauth_refresh_tokens" }

// oauthSigningKey0016 is a tenant's key for signing access tokens: the private key
// sealed by the keyring, the public key in the clear. A retired key signs no more and
// verifies until the tokens it signed have expired.
type oauthSigningKey0016 struct {
	ID        string     `gorm:"primaryKey;size:40"`
	TenantID  string     `gorm:"size:40;not null;index"`
	Sealed    []byte     `gorm:"not null"`
	KeyID     string     `gorm:"size:128;not null"`
	Public    string     `gorm:"type:text;not null"`
	CreatedAt time.Time  `gorm:"not null"`
	RetiredAt *time.Time ``
}

func (oauthSigningKey0016) TableName() string { return "oauth_signing_keys" }

// up0016OAuthServer creates the tables of Switchboard's own authorization server for
// its MCP URLs.
func up0016OAuthServer(tx *gorm.DB) error {
	for _, m := range []any{&oauthClient0016{}, &oauthCode0016{}, &oauthGrant0016{}, &oauthRefreshToken0016{}, &oauthSigningKey0016{}} {
		if err := tx.Migrator().CreateTable(m); err != nil {
			return fmt.Errorf("create %T: %w", m, err)
		}
	}
	return nil
}
