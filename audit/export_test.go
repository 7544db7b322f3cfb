package audit

import (
	"context"
	"slices"

	"gorm.io/gorm"
)

// Queued is how many events were ever put on w's queue (by Record or Commit).
func (w *Writer) Queued() int64 { return w.queued.Load() }

// Inserter writes batches of events through the writer's prepared multi-row INSERTs.
type Inserter struct{ st *statements }

// NewInserter returns an Inserter on db; Close it.
func NewInserter(db *gorm.DB) *Inserter { return &Inserter{st: newStatements(db)} }

// Insert writes events as one batch.
func (in *Inserter) Insert(ctx context.Context, events []Event) error {
	batch := make([]pending, len(events))
	for i, e := range events {
		batch[i].e = e
	}
	return in.st.insert(ctx, batch)
}

// Transactions is how many batches were written in a transaction of several statements.
func (in *Inserter) Transactions() int64 { return in.st.transactions.Load() }

// Sizes are the row counts of the INSERTs prepared so far, in increasing order.
func (in *Inserter) Sizes() []int {
	in.st.mu.Lock()
	defer in.st.mu.Unlock()
	var sizes []int
	for n := range in.st.prepared {
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	return sizes
}

// Close releases the prepared statements.
func (in *Inserter) Close() { in.st.close() }
