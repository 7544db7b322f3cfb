// Package connections owns connection records and their store: credentials sealed by a
// keyring.Keyring and bound to their row and tenant, token checks against the provider
// when a connection is made, the OAuth connect flow, the refreshing token source and
// refresher, and the events that tell the rest of the hub a connection changed.
//
// Start from [Service] (connect, reconnect, disconnect, the OAuth flow from
// [Service.Authorize] to its callback) and [Connection] (one record, with its [Status]);
// [Store] keeps them with their [Credentials] sealed.
package connections

import (
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Status is a connection's state.
type Status string

// The statuses.
const (
	StatusActive         Status = "active"
	StatusExpiring       Status = "expiring"
	StatusNeedsReconnect Status = "needs_reconnect"
	StatusRevoked        Status = "revoked"
)

// Connection is one tenant's authenticated link to a provider account. It never holds
// the credentials in the clear; Sealed is the AES-256-GCM ciphertext.
type Connection struct {
	ID           string               `gorm:"primaryKey;size:40" json:"id"`
	TenantID     switchboard.TenantID `gorm:"size:40;not null;index" json:"-"`
	OwnerUserID  string               `gorm:"size:40;not null" json:"owner_user_id"`
	Provider     string               `gorm:"size:64;not null" json:"provider"`
	AuthKind     providers.AuthKind   `gorm:"size:16;not null" json:"auth_kind"`
	AccountID    string               `gorm:"size:255;not null" json:"account_id"`
	AccountLabel string               `gorm:"size:255;not null" json:"account_label"`
	Scopes       string               `gorm:"size:2000;not null" json:"scopes"` // space-separated
	// Meta is the account's non-secret data the provider's operations need (providers.Account.Meta).
	Meta map[string]string `gorm:"serializer:json;not null" json:"meta,omitempty"`
	// Shared connections may be used by every user of the tenant; others by their owner only.
	Shared      bool       `gorm:"not null" json:"shared"`
	Status      Status     `gorm:"size:32;not null" json:"status"`
	Sealed      []byte     `gorm:"not null" json:"-"`
	KeyID       string     `gorm:"size:128;not null" json:"-"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	RefreshedAt *time.Time `json:"refreshed_at,omitempty"`
	// Refreshable says the credentials hold a refresh token.
	Refreshable bool `gorm:"not null" json:"-"`
	// LastRefreshError is why the last refresh failed ("" after a success), without secrets.
	LastRefreshError string `gorm:"size:500;not null" json:"last_refresh_error,omitempty"`
	// RefreshClaim and RefreshClaimUntil are the lease of the process refreshing the
	// connection now, so processes sharing the database refresh it once.
	RefreshClaim      string     `gorm:"size:40;not null" json:"-"`
	RefreshClaimUntil *time.Time `json:"-"`
	// RatePerSecond and RateBurst are the connection's own rate limit (OwnRateLimit);
	// 0 for its provider's.
	RatePerSecond float64   `gorm:"not null;default:0" json:"-"`
	RateBurst     int       `gorm:"not null;default:0" json:"-"`
	Version       int64     `gorm:"not null" json:"version"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// UsableBy reports whether the principal may use the connection: same tenant, and
// shared or owned by the principal's user (a principal without a user uses shared
// connections only).
func (c *Connection) UsableBy(p switchboard.Principal) bool {
	if c.TenantID != p.TenantID {
		return false
	}
	return c.Shared || (p.UserID != "" && c.OwnerUserID == p.UserID)
}

// Ref is what the connection's provider is told of it when it lists the connection's
// tools (providers.Registry.ConnectionTools).
func (c *Connection) Ref() providers.Connection {
	return providers.Connection{Tenant: c.TenantID, ID: c.ID, Provider: c.Provider, Version: c.Version, Label: c.AccountLabel, Meta: c.Meta}
}

// Credentials are what Sealed holds once opened (providers.Credentials, so a provider
// whose OAuth is per connection refreshes them). They never leave the process.
type Credentials = providers.Credentials
