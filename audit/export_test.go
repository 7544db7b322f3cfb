package audit

import (
	"context"

	"gorm.io/gorm"
)

// Queued is how many events were ever put on w's queue (by Record or Commit).
func (w *Writer) Queued() int64 { return w.queued.Load() }

// NewInserter returns what writes a batch of events through the writer's prepared
// multi-row INSERTs, and what closes them.
func NewInserter(db *gorm.DB) (insert func(context.Context, []Event) error, close func()) {
	st := newStatements(db)
	return func(ctx context.Context, events []Event) error {
		batch := make([]pending, len(events))
		for i, e := range events {
			batch[i].e = e
		}
		return st.insert(ctx, batch)
	}, st.close
}
