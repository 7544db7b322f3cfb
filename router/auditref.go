package router

import (
	"context"

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
	ref.ID = switchboard.NewID("aud")
	return ref.ID
}
