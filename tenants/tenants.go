// Package tenants owns tenants, their users and their API keys: creating them,
// listing them per tenant, and authenticating a bearer API key to a principal on the
// hot path of every MCP call.
//
// Start from [Store]: [Tenant], [User], [APIKey] and [Session] are its records,
// [Invitation] a pending one.
package tenants

import (
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Tenant is one organisation using the hub; Slug names it in MCP URLs.
type Tenant struct {
	ID        switchboard.TenantID `gorm:"primaryKey;size:40" json:"id"`
	Slug      string               `gorm:"size:40;not null" json:"slug"`
	Name      string               `gorm:"size:200;not null" json:"name"`
	CreatedAt time.Time            `json:"created_at"`
}

// TableName is the table tenants live in.
func (Tenant) TableName() string { return "tenants" }

// User is a person of one tenant.
type User struct {
	ID        string               `gorm:"primaryKey;size:40" json:"id"`
	TenantID  switchboard.TenantID `gorm:"size:40;not null" json:"-"`
	Email     string               `gorm:"size:254;not null" json:"email"`
	Role      switchboard.Role     `gorm:"size:16;not null" json:"role"`
	CreatedAt time.Time            `json:"created_at"`
}

// TableName is the table users live in.
func (User) TableName() string { return "users" }

// APIKey is the record of a bearer key. The key itself is shown once, when it is
// created; the hub keeps its prefix, to find it, and the SHA-256 of the whole key.
type APIKey struct {
	ID       string               `gorm:"primaryKey;size:40" json:"id"`
	TenantID switchboard.TenantID `gorm:"size:40;not null" json:"-"`
	UserID   string               `gorm:"size:40;not null" json:"user_id"`
	// AgentID is set for an agent's key; the agent acts on behalf of UserID.
	AgentID *string `gorm:"size:40" json:"agent_id,omitempty"`
	// CreatedBy is the user who created the key: UserID for a user's key; for an
	// agent's key, its creator or the admin who asked for it. An agent's key runs
	// the agent's private connections only when their owner created it.
	CreatedBy  string     `gorm:"size:40;not null" json:"created_by"`
	Name       string     `gorm:"size:100;not null" json:"name"`
	Prefix     string     `gorm:"size:16;not null" json:"prefix"`
	Hash       string     `gorm:"size:64;not null" json:"-"`
	Operator   bool       `gorm:"not null" json:"operator"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	// ExpiresAt is when the key stops working by itself; nil keys never expire.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// TableName is the table API keys live in.
func (APIKey) TableName() string { return "api_keys" }

// Revoked reports whether the key has been revoked.
func (k APIKey) Revoked() bool { return k.RevokedAt != nil }

// Expired reports whether the key's expiry has passed at now.
func (k APIKey) Expired(now time.Time) bool { return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) }
