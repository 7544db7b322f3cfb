package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
)

// TableName is the table connections live in.
func (Connection) TableName() string { return "connections" }

// Store keeps connections with their credentials sealed. Every method takes the
// tenant (or a principal of it), and another tenant's connection is not found, the
// same as a missing one.
type Store struct {
	db *gorm.DB
	kr keyring.Keyring
}

// NewStore returns a Store on db that seals with kr.
func NewStore(db *gorm.DB, kr keyring.Keyring) *Store { return &Store{db: db, kr: kr} }

// Create stores a new connection of the tenant: it assigns the ID, seals the
// credentials to that ID and tenant, and starts at version 1 (active unless set).
func (s *Store) Create(ctx context.Context, tenant switchboard.TenantID, c *Connection, creds Credentials) error {
	switch {
	case c.Provider == "":
		return switchboard.Invalid("provider", "is required")
	case c.OwnerUserID == "":
		return switchboard.Invalid("owner_user_id", "is required")
	case c.AuthKind == "":
		return switchboard.Invalid("auth_kind", "is required")
	case creds.AccessToken == "" && creds.ClientSecret == "" && c.AuthKind != providers.AuthNone:
		return switchboard.Invalid("token", "is required")
	}
	c.ID = switchboard.NewID("con")
	c.TenantID = tenant
	c.Version = 1
	c.Refreshable = creds.RefreshToken != ""
	if c.ExpiresAt == nil && !creds.Expiry.IsZero() {
		exp := creds.Expiry.UTC().Truncate(time.Microsecond)
		c.ExpiresAt = &exp
	}
	if c.Status == "" {
		c.Status = StatusActive
	}
	sealed, keyID, err := sealCredentials(ctx, s.kr, tenant, c.ID, creds)
	if err != nil {
		return switchboard.Internal(fmt.Errorf("create connection: %w", err))
	}
	c.Sealed, c.KeyID = sealed, keyID
	if err := s.db.WithContext(ctx).Create(c).Error; err != nil {
		if errors.Is(err, gorm.ErrForeignKeyViolated) {
			return switchboard.NotFound("tenant")
		}
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return switchboard.Errorf(switchboard.CodeConflict, "the tenant has such a connection already")
		}
		return switchboard.Internal(fmt.Errorf("create connection: %w", err))
	}
	return nil
}

// Get returns one of the tenant's connections, without opening its credentials.
func (s *Store) Get(ctx context.Context, tenant switchboard.TenantID, id string) (Connection, error) {
	var c Connection
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Take(&c).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return Connection{}, switchboard.NotFound("connection")
	case err != nil:
		return Connection{}, switchboard.Internal(fmt.Errorf("read connection %s: %w", id, err))
	}
	return c, nil
}

// List returns every connection of the tenant, oldest first.
func (s *Store) List(ctx context.Context, tenant switchboard.TenantID) ([]Connection, error) {
	var cs []Connection
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("created_at, id").Find(&cs).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list connections: %w", err))
	}
	return cs, nil
}

// Usable returns the connections p may use: of p's tenant, shared or p's own, and
// active, expiring or needing reconnection (whose tools stay listed, marked, while
// their calls return the reconnect link).
func (s *Store) Usable(ctx context.Context, p switchboard.Principal) ([]Connection, error) {
	var cs []Connection
	err := s.db.WithContext(ctx).
		Where("tenant_id = ? AND status IN ? AND (shared = ? OR owner_user_id = ?)", p.TenantID, []Status{StatusActive, StatusExpiring, StatusNeedsReconnect}, true, p.UserID).
		Order("created_at, id").Find(&cs).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list usable connections: %w", err))
	}
	out := cs[:0]
	for _, c := range cs {
		if c.UsableBy(p) { // the query says the same; this keeps the rule in one place
			out = append(out, c)
		}
	}
	return out, nil
}

// Open returns one of the tenant's connections with its credentials unsealed.
func (s *Store) Open(ctx context.Context, tenant switchboard.TenantID, id string) (Connection, Credentials, error) {
	c, err := s.Get(ctx, tenant, id)
	if err != nil {
		return Connection{}, Credentials{}, err
	}
	creds, err := openCredentials(ctx, s.kr, &c)
	if err != nil {
		return Connection{}, Credentials{}, err
	}
	return c, creds, nil
}

// UpdateCredentials re-seals a connection's credentials (after a token refresh or a
// reconnect) if it is still at version; it returns the connection at its new version,
// or a conflict when another writer got there first.
func (s *Store) UpdateCredentials(ctx context.Context, tenant switchboard.TenantID, id string, version int64, creds Credentials, status Status) (Connection, error) {
	sealed, keyID, err := sealCredentials(ctx, s.kr, tenant, id, creds)
	if err != nil {
		return Connection{}, switchboard.Internal(fmt.Errorf("update connection %s: %w", id, err))
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	updates := map[string]any{"sealed": sealed, "key_id": keyID, "status": status, "version": version + 1, "refreshed_at": now, "updated_at": now, "expires_at": nil,
		"refreshable": creds.RefreshToken != "", "last_refresh_error": ""}
	if !creds.Expiry.IsZero() {
		updates["expires_at"] = creds.Expiry.UTC().Truncate(time.Microsecond)
	}
	return s.update(ctx, tenant, id, version, updates)
}

// SetStatus changes a connection's status if it is still at version.
func (s *Store) SetStatus(ctx context.Context, tenant switchboard.TenantID, id string, version int64, status Status) (Connection, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return s.update(ctx, tenant, id, version, map[string]any{"status": status, "version": version + 1, "updated_at": now})
}

func (s *Store) update(ctx context.Context, tenant switchboard.TenantID, id string, version int64, updates map[string]any) (Connection, error) {
	res := s.db.WithContext(ctx).Model(&Connection{}).Where("tenant_id = ? AND id = ? AND version = ?", tenant, id, version).Updates(updates)
	if res.Error != nil {
		return Connection{}, switchboard.Internal(fmt.Errorf("update connection %s: %w", id, res.Error))
	}
	if res.RowsAffected == 0 {
		if _, err := s.Get(ctx, tenant, id); err != nil {
			return Connection{}, err
		}
		return Connection{}, switchboard.Errorf(switchboard.CodeConflict, "the connection changed meanwhile; read it again")
	}
	return s.Get(ctx, tenant, id)
}

// Delete removes one of the tenant's connections.
func (s *Store) Delete(ctx context.Context, tenant switchboard.TenantID, id string) error {
	res := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Delete(&Connection{})
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("delete connection %s: %w", id, res.Error))
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("connection")
	}
	return nil
}

// scopes joins scopes into the stored space-separated form.
func scopes(ss []string) string { return strings.Join(ss, " ") }

// connectOAuth stores the connection an OAuth flow made: when the owner already has a
// connection of the same provider account, it is reconnected (new credentials, scopes
// and meta, active again, at the next version), keeping its label unless relabel (the
// person typed one for this flow), so neither it nor the Activity rows that name it
// change name behind the person's back; otherwise c is created.
func (s *Store) connectOAuth(ctx context.Context, tenant switchboard.TenantID, c Connection, creds Credentials, relabel bool) (Connection, bool, error) {
	var existing Connection
	err := s.db.WithContext(ctx).
		Where("tenant_id = ? AND provider = ? AND account_id = ? AND owner_user_id = ?", tenant, c.Provider, c.AccountID, c.OwnerUserID).
		Order("created_at, id").Take(&existing).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		if err := s.Create(ctx, tenant, &c, creds); err != nil {
			return Connection{}, false, err
		}
		return c, false, nil
	case err != nil:
		return Connection{}, false, switchboard.Internal(fmt.Errorf("find connection to reconnect: %w", err))
	}
	if !relabel {
		c.AccountLabel = existing.AccountLabel
	}
	got, err := s.renew(ctx, tenant, existing, c, creds)
	if err != nil {
		return Connection{}, false, err
	}
	return got, true, nil
}

// renew gives existing new credentials in place (same id, so agents bound to it keep
// their tools): with c's auth kind, label, scopes and meta, active again, at the next
// version. A concurrent change since existing was read is a conflict.
func (s *Store) renew(ctx context.Context, tenant switchboard.TenantID, existing Connection, c Connection, creds Credentials) (Connection, error) {
	sealed, keyID, err := sealCredentials(ctx, s.kr, tenant, existing.ID, creds)
	if err != nil {
		return Connection{}, switchboard.Internal(fmt.Errorf("reconnect connection %s: %w", existing.ID, err))
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	updates := map[string]any{
		"sealed": sealed, "key_id": keyID, "status": StatusActive, "version": existing.Version + 1, "refreshed_at": now, "updated_at": now,
		"expires_at": nil, "refreshable": creds.RefreshToken != "", "last_refresh_error": "", "auth_kind": c.AuthKind,
		"account_label": c.AccountLabel, "scopes": c.Scopes, "meta": metaJSON(c.Meta),
	}
	if !creds.Expiry.IsZero() {
		updates["expires_at"] = creds.Expiry.UTC().Truncate(time.Microsecond)
	}
	return s.update(ctx, tenant, existing.ID, existing.Version, updates)
}

// Existing reports which of ids name a connection of the tenant, whoever owns it:
// only whether each exists, nothing else of another user's connection.
func (s *Store) Existing(ctx context.Context, tenant switchboard.TenantID, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var found []string
	if err := s.db.WithContext(ctx).Model(&Connection{}).Where("tenant_id = ? AND id IN ?", tenant, ids).Pluck("id", &found).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("find connections: %w", err))
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// metaJSON is the stored form of a connection's meta, for updates by column.
func metaJSON(meta map[string]string) string {
	if meta == nil {
		meta = map[string]string{}
	}
	b, _ := json.Marshal(meta) // a map of strings always encodes
	return string(b)
}
