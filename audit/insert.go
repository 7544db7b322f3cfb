package audit

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"gorm.io/gorm"
)

// columns are audit_events' columns in the order insert binds them.
var columns = []string{"id", "tenant_id", "at", "kind", "principal", "key_id", "tool", "connection_id",
	"outcome", "upstream_status", "latency_micros", "args_hash", "detail"}

// chunkSizes are the row counts of the prepared INSERTs: a batch is cut into chunks
// of these sizes, largest first, so a handful of statements, each prepared once,
// write a batch of any size.
var chunkSizes = []int{256, 64, 16, 4, 1}

// statements holds the prepared multi-row INSERTs of audit_events, one per chunk size.
type statements struct {
	db       *gorm.DB
	postgres bool
	mu       sync.Mutex
	prepared map[int]*sql.Stmt
}

func newStatements(db *gorm.DB) *statements {
	return &statements{db: db, postgres: db.Dialector.Name() == "postgres", prepared: map[int]*sql.Stmt{}}
}

// sql is the INSERT of n rows, with the dialect's placeholders.
func (s *statements) sql(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO audit_events (")
	b.WriteString(strings.Join(columns, ", "))
	b.WriteString(") VALUES ")
	arg := 0
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range columns {
			if c > 0 {
				b.WriteString(", ")
			}
			arg++
			if s.postgres {
				b.WriteString("$" + strconv.Itoa(arg))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// stmt returns the prepared INSERT of n rows, preparing it on first use.
func (s *statements) stmt(ctx context.Context, sqlDB *sql.DB, n int) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.prepared[n]; ok {
		return st, nil
	}
	st, err := sqlDB.PrepareContext(ctx, s.sql(n))
	if err != nil {
		return nil, fmt.Errorf("prepare audit insert of %d rows: %w", n, err)
	}
	s.prepared[n] = st
	return st, nil
}

// insert writes the batch in one transaction. Its statements are prepared before the
// transaction begins: preparing takes a connection of the pool, and a transaction
// holds SQLite's write lock, so preparing inside it could wait for the pool's other
// connection while that one's writer waits for the lock, both until the busy timeout
// (and for ever on a pool of one).
func (s *statements) insert(ctx context.Context, batch []pending) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("audit database: %w", err)
	}
	var chunks []*sql.Stmt
	var sizes []int
	for rest := len(batch); rest > 0; {
		n := chunkSizes[len(chunkSizes)-1]
		for _, size := range chunkSizes {
			if size <= rest {
				n = size
				break
			}
		}
		st, err := s.stmt(ctx, sqlDB, n)
		if err != nil {
			return err
		}
		chunks, sizes = append(chunks, st), append(sizes, n)
		rest -= n
	}
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin audit batch: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// Room for the batch's largest chunk, not for the largest statement: a batch of a
	// few calls' rows allocated 256 rows' arguments (53 KB) on every write.
	args := make([]any, 0, sizes[0]*len(columns))
	rest := batch
	for i, st := range chunks {
		n := sizes[i]
		args = args[:0]
		for _, p := range rest[:n] {
			e := &p.e
			args = append(args, e.ID, string(e.TenantID), e.At, string(e.Kind), e.Principal, e.KeyID, e.Tool, e.ConnectionID,
				e.Outcome, e.UpstreamStatus, e.LatencyMicros, e.ArgsHash, e.Detail)
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert %d audit events: %w", n, err)
		}
		rest = rest[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit audit batch: %w", err)
	}
	return nil
}

// close releases the prepared statements.
func (s *statements) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, st := range s.prepared {
		_ = st.Close()
		delete(s.prepared, n)
	}
}
