package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// client is an MCP client registered by dynamic client registration (RFC 7591).
type client struct {
	ID           string `gorm:"primaryKey;size:40"`
	Name         string `gorm:"size:200;not null"`
	RedirectURIs string `gorm:"type:text;not null"` // JSON array
	AuthMethod   string `gorm:"size:32;not null"`
	SecretHash   string `gorm:"size:64;not null"`
	ClientURI    string `gorm:"size:2048;not null"`
	LogoURI      string `gorm:"size:2048;not null"`
	CreatedAt    time.Time
}

func (client) TableName() string { return "oauth_clients" }

// code is an authorization code, kept as its SHA-256, with what the person allowed.
type code struct {
	ID          string               `gorm:"primaryKey;size:40"`
	TenantID    switchboard.TenantID `gorm:"size:40;not null"`
	Hash        string               `gorm:"size:64;not null"`
	ClientID    string               `gorm:"size:2048;not null"`
	ClientName  string               `gorm:"size:200;not null"`
	RedirectURI string               `gorm:"size:2048;not null"`
	Challenge   string               `gorm:"size:128;not null"`
	Resource    string               `gorm:"size:2048;not null"`
	Scope       string               `gorm:"size:200;not null"`
	UserID      string               `gorm:"size:40;not null"`
	AgentID     string               `gorm:"size:40;not null"`
	ConsentedBy string               `gorm:"size:40;not null"`
	ExpiresAt   time.Time
	UsedAt      *time.Time
	GrantID     string `gorm:"size:40;not null"`
	CreatedAt   time.Time
}

func (code) TableName() string { return "oauth_codes" }

// Grant is what a person allowed an MCP client: one MCP URL of a tenant, as the person
// (AgentID "") or as one of the tenant's agents, until it is revoked.
type Grant struct {
	ID         string               `gorm:"primaryKey;size:40" json:"id"`
	TenantID   switchboard.TenantID `gorm:"size:40;not null" json:"-"`
	ClientID   string               `gorm:"size:2048;not null" json:"client_id"`
	ClientName string               `gorm:"size:200;not null" json:"client_name"`
	// Resource is the MCP URL the grant's tokens are accepted at, and nowhere else.
	Resource string `gorm:"size:2048;not null" json:"resource"`
	Scope    string `gorm:"size:200;not null" json:"scope"`
	// UserID is who the client acts as: the person, or an agent's creator.
	UserID  string `gorm:"size:40;not null" json:"user_id"`
	AgentID string `gorm:"size:40;not null" json:"agent_id,omitempty"`
	// ConsentedBy is the person who allowed it.
	ConsentedBy string     `gorm:"size:40;not null" json:"consented_by"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

// TableName is the table grants live in.
func (Grant) TableName() string { return "oauth_grants" }

// refreshToken is a refresh token, kept as its SHA-256; each is used once.
type refreshToken struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	GrantID   string               `gorm:"size:40;not null"`
	Hash      string               `gorm:"size:64;not null"`
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func (refreshToken) TableName() string { return "oauth_refresh_tokens" }

// signingKey is a tenant's access token signing key, its private half sealed.
type signingKey struct {
	ID        string               `gorm:"primaryKey;size:40"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null"`
	Sealed    []byte               `gorm:"not null"`
	KeyID     string               `gorm:"size:128;not null"`
	Public    string               `gorm:"type:text;not null"`
	CreatedAt time.Time
	RetiredAt *time.Time
}

func (signingKey) TableName() string { return "oauth_signing_keys" }

// hashSecret is how codes, refresh tokens and client secrets are stored: hex SHA-256.
// They are 256-bit random values, so a fast hash is enough.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
