package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// row is a row of mcp_sessions.
type row struct {
	ID              string `gorm:"primaryKey"`
	TenantID        string
	PrincipalID     string
	KeyID           string
	AgentID         string
	ProtocolVersion string
	ClientInfo      string
	Capabilities    string
	LogLevel        string
	Subscriptions   string // a JSON array of URIs
	CreatedAt       time.Time
	LastUsedAt      *time.Time
}

func (row) TableName() string { return "mcp_sessions" }

func toRow(r Record) row {
	return row{
		ID: r.ID, TenantID: string(r.TenantID), PrincipalID: r.PrincipalID, KeyID: r.KeyID, AgentID: r.AgentID,
		ProtocolVersion: r.ProtocolVersion, ClientInfo: orEmpty(r.ClientInfo), Capabilities: orEmpty(r.Capabilities),
		LogLevel: r.LogLevel, Subscriptions: subscriptionsJSON(r.Subscriptions), CreatedAt: r.CreatedAt.UTC(), LastUsedAt: r.LastUsedAt,
	}
}

func subscriptionsJSON(subs []string) string {
	if len(subs) == 0 {
		return "[]"
	}
	raw, _ := json.Marshal(subs)
	return string(raw)
}

func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

func (w row) record() Record {
	r := Record{
		ID: w.ID, TenantID: switchboard.TenantID(w.TenantID), PrincipalID: w.PrincipalID, KeyID: w.KeyID, AgentID: w.AgentID,
		ProtocolVersion: w.ProtocolVersion, ClientInfo: []byte(w.ClientInfo), Capabilities: []byte(w.Capabilities),
		LogLevel: w.LogLevel, CreatedAt: w.CreatedAt,
	}
	if w.Subscriptions != "" && w.Subscriptions != "[]" {
		_ = json.Unmarshal([]byte(w.Subscriptions), &r.Subscriptions)
	}
	if w.LastUsedAt != nil {
		t := *w.LastUsedAt
		r.LastUsedAt = &t
	}
	return r
}

// Store keeps the sessions in the database.
type Store struct {
	db *gorm.DB
}

// NewStore returns a Store on db (migrated).
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// Create records a new session and evicts the principal's oldest idle sessions beyond
// limit (0: no cap), returning the evicted ones.
func (s *Store) Create(ctx context.Context, r Record, limit int) ([]Ended, error) {
	if r.ID == "" || r.TenantID == "" || r.PrincipalID == "" {
		return nil, fmt.Errorf("create session: id, tenant and principal are required")
	}
	var evicted []Ended
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(ptr(toRow(r))).Error; err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		if limit <= 0 {
			return nil
		}
		var ids []string
		// The newest `limit` sessions stay; the others, least recently used first, go.
		err := tx.Model(&row{}).
			Where("tenant_id = ? AND principal_id = ?", string(r.TenantID), r.PrincipalID).
			Order("COALESCE(last_used_at, created_at) DESC, id DESC").
			Offset(limit).Limit(1<<20).Pluck("id", &ids).Error
		if err != nil {
			return fmt.Errorf("find sessions over the cap: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Where("tenant_id = ? AND id IN ?", string(r.TenantID), ids).Delete(&row{}).Error; err != nil {
			return fmt.Errorf("evict: %w", err)
		}
		for _, id := range ids {
			evicted = append(evicted, Ended{TenantID: r.TenantID, ID: id})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return evicted, nil
}

func ptr[T any](v T) *T { return &v }

// Get returns a session of the tenant; another tenant's session, or none, is not found.
func (s *Store) Get(ctx context.Context, tenant switchboard.TenantID, id string) (Record, error) {
	var w row
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", string(tenant), id).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Record{}, switchboard.NotFound("MCP session")
	}
	if err != nil {
		return Record{}, fmt.Errorf("get session: %w", err)
	}
	return w.record(), nil
}

// Touch records that the session was used at t.
func (s *Store) Touch(ctx context.Context, tenant switchboard.TenantID, id string, t time.Time) error {
	t = t.UTC()
	err := s.db.WithContext(ctx).Model(&row{}).Where("tenant_id = ? AND id = ?", string(tenant), id).
		Update("last_used_at", &t).Error
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// SetLogLevel records the log level the client asked for.
func (s *Store) SetLogLevel(ctx context.Context, tenant switchboard.TenantID, id, level string) error {
	err := s.db.WithContext(ctx).Model(&row{}).Where("tenant_id = ? AND id = ?", string(tenant), id).
		Update("log_level", level).Error
	if err != nil {
		return fmt.Errorf("set session log level: %w", err)
	}
	return nil
}

// SetSubscription records that the session subscribed to uri (on) or unsubscribed
// from it. Two nodes recording at once both keep their change: the row is written only
// over the list it was read with, else read again.
func (s *Store) SetSubscription(ctx context.Context, tenant switchboard.TenantID, id, uri string, on bool) error {
	for range 16 {
		var w row
		err := s.db.WithContext(ctx).Select("subscriptions").Where("tenant_id = ? AND id = ?", string(tenant), id).Take(&w).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return switchboard.NotFound("MCP session")
		}
		if err != nil {
			return fmt.Errorf("set session subscription: %w", err)
		}
		var subs []string
		_ = json.Unmarshal([]byte(w.Subscriptions), &subs)
		next, changed := withSubscription(subs, uri, on)
		if !changed {
			return nil
		}
		res := s.db.WithContext(ctx).Model(&row{}).Where("tenant_id = ? AND id = ? AND subscriptions = ?", string(tenant), id, w.Subscriptions).
			Update("subscriptions", subscriptionsJSON(next))
		if res.Error != nil {
			return fmt.Errorf("set session subscription: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return nil
		}
	}
	return fmt.Errorf("set session subscription: the session's subscriptions kept changing")
}

// Delete ends a session of the tenant; deleting one that does not exist is no error.
func (s *Store) Delete(ctx context.Context, tenant switchboard.TenantID, id string) error {
	if err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", string(tenant), id).Delete(&row{}).Error; err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteExpired deletes the sessions expired at now under the limits and returns them.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time, l Limits) ([]Ended, error) {
	unused, idle := now.Add(-l.Unused).UTC(), now.Add(-l.Idle).UTC()
	var gone []row
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Model(&row{}).Select("id", "tenant_id").
			Where("(last_used_at IS NULL AND created_at < ?) OR last_used_at < ?", unused, idle)
		if err := q.Limit(10000).Find(&gone).Error; err != nil {
			return fmt.Errorf("find: %w", err)
		}
		if len(gone) == 0 {
			return nil
		}
		ids := make([]string, len(gone))
		for i, g := range gone {
			ids[i] = g.ID
		}
		// The condition is repeated so a session used meanwhile stays.
		return tx.Where("id IN ? AND ((last_used_at IS NULL AND created_at < ?) OR last_used_at < ?)", ids, unused, idle).
			Delete(&row{}).Error
	})
	if err != nil {
		return nil, fmt.Errorf("delete expired sessions: %w", err)
	}
	out := make([]Ended, len(gone))
	for i, g := range gone {
		out[i] = Ended{TenantID: switchboard.TenantID(g.TenantID), ID: g.ID}
	}
	return out, nil
}
