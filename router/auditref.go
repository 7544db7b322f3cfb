package router

import (
	"context"
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

// auditDetail is the detail the caller asked for, "" when none.
func auditDetail(ctx context.Context) string {
	d, _ := ctx.Value(auditDetailKey{}).(string)
	return d
}
