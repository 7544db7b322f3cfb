package router

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// AuditRef receives the id of a call's audit row, so the answer can name it: a caller
// (or an operator holding the answer) finds the row the call left by that id.
type AuditRef struct {
	// ID is the audit row's id once Execute (or Prepare's refusal) has recorded it.
	ID string
}

type auditRefKey struct{}

// WithAuditRef returns ctx asking Execute to fill ref with the call's audit row id.
func WithAuditRef(ctx context.Context, ref *AuditRef) context.Context {
	return context.WithValue(ctx, auditRefKey{}, ref)
}

// auditID is the id for the call's row: chosen here when the caller asked for it.
func auditID(ctx context.Context) string {
	ref, ok := ctx.Value(auditRefKey{}).(*AuditRef)
	if !ok {
		return ""
	}
	ref.ID = switchboard.NewOrderedID("aud", time.Now())
	return ref.ID
}

// callAuditID is the id of the row of a call that sends upstream requests: its row
// is written before they leave and completed after, so it has an id either way.
func callAuditID(ctx context.Context, start time.Time) string {
	if id := auditID(ctx); id != "" {
		return id
	}
	return switchboard.NewOrderedID("aud", start)
}

type auditDetailKey struct{}

// WithAuditDetail returns ctx asking Execute to write detail in the call's audit row:
// what the call was part of (a workflow run's step, for one).
func WithAuditDetail(ctx context.Context, detail string) context.Context {
	return context.WithValue(ctx, auditDetailKey{}, detail)
}

// auditDetail is the detail the caller asked for, and what the tool noted
// (NoteAudit), "" when none.
func auditDetail(ctx context.Context) string {
	d, _ := ctx.Value(auditDetailKey{}).(string)
	if n, ok := ctx.Value(auditNoteKey{}).(*auditNote); ok {
		n.mu.Lock()
		note := n.text
		n.mu.Unlock()
		if note != "" && d != "" {
			d += "; "
		}
		d += note
	}
	if len(d) > maxAuditDetail {
		cut := maxAuditDetail - 3
		for cut > 0 && (d[cut]&0xC0) == 0x80 {
			cut--
		}
		d = d[:cut] + "..."
	}
	return d
}

// maxAuditDetail bounds an audit row's detail to its column.
const maxAuditDetail = 500

// auditNote is what a running tool notes for its call's audit row.
type auditNote struct {
	mu   sync.Mutex
	text string
}

type auditNoteKey struct{}

// withAuditNote returns ctx in which the tool Execute runs may note what its call's
// audit row should say (NoteAudit).
func withAuditNote(ctx context.Context) context.Context {
	return context.WithValue(ctx, auditNoteKey{}, &auditNote{})
}

// NoteAudit records, in the audit row of the tool call running in ctx, what the call
// carried that its arguments' hash does not show (a flow tool's _context). Outside a
// call Execute runs it does nothing.
func NoteAudit(ctx context.Context, note string) {
	if n, ok := ctx.Value(auditNoteKey{}).(*auditNote); ok {
		n.mu.Lock()
		n.text = note
		n.mu.Unlock()
	}
}
