package mcptransport

import (
	"context"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/sessions"
)

// SessionStore records the MCP sessions: sessions.Store on the hub's database, or
// sessions.Memory for a single process without one.
type SessionStore interface {
	Create(ctx context.Context, r sessions.Record, limit int) ([]sessions.Ended, error)
	Get(ctx context.Context, tenant switchboard.TenantID, id string) (sessions.Record, error)
	Touch(ctx context.Context, tenant switchboard.TenantID, id string, at time.Time) error
	SetLogLevel(ctx context.Context, tenant switchboard.TenantID, id, level string) error
	SetSubscription(ctx context.Context, tenant switchboard.TenantID, id, uri string, on bool) error
	Delete(ctx context.Context, tenant switchboard.TenantID, id string) error
	DeleteExpired(ctx context.Context, now time.Time, l sessions.Limits) ([]sessions.Ended, error)
}
