package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
)

// StreamEvent is one event of a call's SSE stream kept in a StreamLog.
type StreamEvent struct {
	ID string
	// Seq orders the stream's events.
	Seq int
	// Message is the event's JSON-RPC message; nil for a priming event, which is never
	// replayed, and for the last mark.
	Message json.RawMessage
	// Last marks the end of the stream: the call has answered (or was canceled), and
	// nothing follows.
	Last bool
}

// StreamLog keeps the streams of MCP calls whose client left before the answer in the
// hub's database (mcp_stream_events), where every node reads them, so Last-Event-ID
// resumes a call on any node. Messages are sealed by the keyring, bound to their
// tenant, session, stream and id. What it keeps is bounded: per stream, the newest
// MaxEvents events within MaxBytes of messages (the newest always stays); and no event
// outlives MaxAge (Prune).
type StreamLog struct {
	DB        *gorm.DB
	Keyring   keyring.Keyring
	MaxEvents int
	MaxBytes  int
	MaxAge    time.Duration
	Now       func() time.Time
}

// Stream log bounds unless told otherwise.
const (
	DefaultStreamEvents = 256
	DefaultStreamBytes  = 8 << 20
	DefaultStreamAge    = 10 * time.Minute
)

// NewStreamLog returns a StreamLog on db (migrated) with the default bounds.
func NewStreamLog(db *gorm.DB, kr keyring.Keyring) *StreamLog {
	return &StreamLog{DB: db, Keyring: kr, MaxEvents: DefaultStreamEvents, MaxBytes: DefaultStreamBytes, MaxAge: DefaultStreamAge, Now: time.Now}
}

// streamEventRow is a row of mcp_stream_events.
type streamEventRow struct {
	ID            string `gorm:"primaryKey"`
	TenantID      string
	SessionID     string
	Stream        string
	Seq           int
	MessageSealed []byte
	MessageKeyID  string
	MessageBytes  int
	Last          bool
	CreatedAt     time.Time
}

func (streamEventRow) TableName() string { return "mcp_stream_events" }

func streamAAD(tenant switchboard.TenantID, session, stream, id string) []byte {
	return []byte(strings.Join([]string{"mcp_stream_event", string(tenant), session, stream, id}, "\x00"))
}

// Append records events of the tenant session's stream, in order, and drops the
// stream's oldest beyond the bounds.
func (l *StreamLog) Append(ctx context.Context, tenant switchboard.TenantID, session, stream string, events []StreamEvent) error {
	if tenant == "" || session == "" || stream == "" {
		return errors.New("keep stream events: tenant, session and stream are required")
	}
	now := l.Now().UTC()
	rows := make([]streamEventRow, 0, len(events))
	for _, ev := range events {
		r := streamEventRow{ID: ev.ID, TenantID: string(tenant), SessionID: session, Stream: stream, Seq: ev.Seq, Last: ev.Last, CreatedAt: now}
		if ev.Message != nil {
			sealed, keyID, err := l.Keyring.Seal(ctx, ev.Message, streamAAD(tenant, session, stream, ev.ID))
			if err != nil {
				return fmt.Errorf("keep stream events: seal: %w", err)
			}
			r.MessageSealed, r.MessageKeyID, r.MessageBytes = sealed, keyID, len(ev.Message)
		}
		rows = append(rows, r)
	}
	return l.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error; err != nil {
			return fmt.Errorf("keep stream events: %w", err)
		}
		var held []streamEventRow
		if err := tx.Select("id", "message_bytes").Where("tenant_id = ? AND session_id = ? AND stream = ?", string(tenant), session, stream).
			Order("seq DESC").Find(&held).Error; err != nil {
			return fmt.Errorf("keep stream events: bound: %w", err)
		}
		var drop []string
		bytes := 0
		for i, h := range held {
			bytes += h.MessageBytes
			if i > 0 && (i >= l.MaxEvents || bytes > l.MaxBytes) {
				drop = append(drop, h.ID)
			}
		}
		if len(drop) == 0 {
			return nil
		}
		if err := tx.Where("tenant_id = ? AND id IN ?", string(tenant), drop).Delete(&streamEventRow{}).Error; err != nil {
			return fmt.Errorf("keep stream events: bound: %w", err)
		}
		return nil
	})
}

// After returns the events of the tenant session's stream holding lastEventID that
// followed it, in order; found is false when no stream of the session holds it.
func (l *StreamLog) After(ctx context.Context, tenant switchboard.TenantID, session, lastEventID string) ([]StreamEvent, bool, error) {
	db := l.DB.WithContext(ctx)
	var at streamEventRow
	err := db.Select("stream", "seq").Where("tenant_id = ? AND session_id = ? AND id = ?", string(tenant), session, lastEventID).Take(&at).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read stream events: %w", err)
	}
	var rows []streamEventRow
	if err := db.Where("tenant_id = ? AND session_id = ? AND stream = ? AND seq > ?", string(tenant), session, at.Stream, at.Seq).
		Order("seq").Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("read stream events: %w", err)
	}
	out := make([]StreamEvent, 0, len(rows))
	for _, r := range rows {
		ev := StreamEvent{ID: r.ID, Seq: r.Seq, Last: r.Last}
		if r.MessageKeyID != "" {
			msg, err := l.Keyring.Open(ctx, r.MessageKeyID, r.MessageSealed, streamAAD(tenant, session, r.Stream, r.ID))
			if err != nil {
				return nil, false, fmt.Errorf("read stream events: open: %w", err)
			}
			ev.Message = msg
		}
		out = append(out, ev)
	}
	return out, true, nil
}

// Prune deletes the events kept longer than MaxAge at now.
func (l *StreamLog) Prune(ctx context.Context, now time.Time) error {
	if err := l.DB.WithContext(ctx).Where("created_at < ?", now.Add(-l.MaxAge).UTC()).Delete(&streamEventRow{}).Error; err != nil {
		return fmt.Errorf("prune stream events: %w", err)
	}
	return nil
}

// SealedRecords returns the kept messages as records for key rotation (`switchboard
// keys rotate`).
func (l *StreamLog) SealedRecords() keyring.SealedRecords {
	return &keyring.SealedTable{
		DB: l.DB, Keyring: l.Keyring, Name: "mcp_stream_events", Table: "mcp_stream_events", Columns: []string{"session_id", "stream"},
		Parts: []keyring.SealedColumns{{Sealed: "message_sealed", KeyID: "message_key_id", AAD: func(r keyring.SealedRow) []byte {
			return streamAAD(r.TenantID, r.Columns["session_id"], r.Columns["stream"], r.ID)
		}}},
	}
}
