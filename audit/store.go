package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// MaxListLimit is the largest page List returns.
const MaxListLimit = 500

// ListOptions narrow and page a listing.
type ListOptions struct {
	Limit  int        // rows per page; 0 means 50, at most MaxListLimit
	Before *time.Time // only events strictly before this time
	After  *time.Time // only events at or after this time
	Cursor string     // the next value of the previous page
	Kind   Kind       // only events of this kind
	Tool   string     // only calls of tools whose name contains this (a part: "issue" matches github_get_issue)
	// Outcome keeps only events with this outcome ("ok" or an error code).
	Outcome string
	// ConnectionID keeps only events about this connection.
	ConnectionID string
	// Principal, when set, keeps only the events of that principal ("user:…", "agent:…").
	Principal string
}

// Store reads audit events.
type Store struct {
	db *gorm.DB
}

// NewStore returns a Store on db.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// List returns the tenant's events, newest first, and the cursor of the next page ("" on
// the last page).
func (s *Store) List(ctx context.Context, tenant switchboard.TenantID, opts ListOptions) ([]Event, string, error) {
	limit := opts.Limit
	switch {
	case limit == 0:
		limit = 50
	case limit < 0 || limit > MaxListLimit:
		return nil, "", switchboard.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxListLimit))
	}
	q := s.db.WithContext(ctx).Where("tenant_id = ?", tenant)
	if opts.Before != nil {
		q = q.Where("at < ?", opts.Before.UTC())
	}
	if opts.After != nil {
		q = q.Where("at >= ?", opts.After.UTC())
	}
	if opts.Outcome != "" {
		q = q.Where("outcome = ?", opts.Outcome)
	}
	if opts.ConnectionID != "" {
		q = q.Where("connection_id = ?", opts.ConnectionID)
	}
	if opts.Kind != "" {
		q = q.Where("kind = ?", opts.Kind)
	}
	if opts.Tool != "" {
		// A part of the name matches, as people type it; % and _ in it are literal.
		part := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(opts.Tool)
		q = q.Where(`tool LIKE ? ESCAPE '\'`, "%"+part+"%")
	}
	if opts.Principal != "" {
		q = q.Where("principal = ?", opts.Principal)
	}
	if opts.Cursor != "" {
		at, id, err := decodeCursor(opts.Cursor)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("(at < ? OR (at = ? AND id < ?))", at, at, id)
	}
	var events []Event
	if err := q.Order("at DESC, id DESC").Limit(limit + 1).Find(&events).Error; err != nil {
		return nil, "", switchboard.Internal(fmt.Errorf("list audit events: %w", err))
	}
	next := ""
	if len(events) > limit {
		events = events[:limit]
		last := events[limit-1]
		next = encodeCursor(last.At, last.ID)
	}
	for i := range events {
		events[i].At = events[i].At.UTC()
	}
	return events, next, nil
}

// LastUsed returns, for each of the tenant's connections named, when a tool last ran on
// it (connections never used are absent).
func (s *Store) LastUsed(ctx context.Context, tenant switchboard.TenantID, connectionIDs []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(connectionIDs) == 0 {
		return out, nil
	}
	// One indexed lookup per connection: a tenant has few, and MAX over a timestamp
	// column comes back as text from SQLite.
	for _, id := range connectionIDs {
		var ats []time.Time
		err := s.db.WithContext(ctx).Model(&Event{}).
			Where("tenant_id = ? AND kind = ? AND connection_id = ?", tenant, KindToolCall, id).
			Order("at DESC").Limit(1).Pluck("at", &ats).Error
		if err != nil {
			return nil, switchboard.Internal(fmt.Errorf("last use of connection %s: %w", id, err))
		}
		if len(ats) == 1 {
			out[id] = ats[0].UTC()
		}
	}
	return out, nil
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UTC().UnixMicro(), 10) + "|" + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	bad := switchboard.Invalid("cursor", "is not a cursor this listing returned")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", bad
	}
	micros, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" {
		return time.Time{}, "", bad
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return time.Time{}, "", bad
	}
	return time.UnixMicro(us).UTC(), id, nil
}
