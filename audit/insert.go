package audit

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// columns are audit_events' columns in the order insert binds them.
var columns = []string{"id", "tenant_id", "at", "kind", "principal", "key_id", "tool", "connection_id",
	"outcome", "upstream_status", "latency_micros", "args_hash", "detail", "node"}

// completes is the upsert clause of every INSERT: a call's row is written in flight
// before its upstream request leaves, and its completion, a row of the same id,
// overwrites the outcome. Only a completion does (never a row in flight, which may
// come late when its caller stopped waiting for it), and only of a row not completed
// yet (a recovered row, outcome_unknown, is completed when its call did finish).
const completes = ` ON CONFLICT (id) DO UPDATE SET outcome = excluded.outcome, upstream_status = excluded.upstream_status, ` +
	`latency_micros = excluded.latency_micros, detail = excluded.detail ` +
	`WHERE excluded.outcome <> '` + OutcomeInFlight + `' AND audit_events.outcome IN ('` + OutcomeInFlight + `', '` + OutcomeUnknown + `')`

// exactRows is the most rows a batch may have to be written by one INSERT of exactly
// its size. Most batches are that small (a call's row and those of the calls that
// finished while the previous batch was written), and one statement needs no
// transaction around it.
const exactRows = 16

// chunkRows are the row counts a larger batch is cut into, largest first, so a handful of
// statements, each prepared once per connection, write a batch of any size; the rest
// of under exactRows rows takes the statement of its size. Both drivers bind a
// statement's arguments in time linear in their number, so a 256-row INSERT costs no
// more per row than 16-row ones (on SQLite about a quarter less, BenchmarkRecord).
var chunkRows = []int{256, 64, exactRows}

// statements holds the prepared multi-row INSERTs of audit_events, one per size.
type statements struct {
	db       *gorm.DB
	postgres bool
	mu       sync.Mutex
	prepared map[int]*sql.Stmt
	// transactions counts the batches written in a transaction of more than one
	// statement, so a test can tell a batch written by one statement alone.
	transactions atomic.Int64
}

func newStatements(db *gorm.DB) *statements {
	return &statements{db: db, postgres: db.Dialector.Name() == "postgres", prepared: map[int]*sql.Stmt{}}
}

// sql is the INSERT of n rows, with the dialect's placeholders, completing rows in
// flight.
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
	b.WriteString(completes)
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

// chunk is how many of rest rows the next statement writes.
func (s *statements) chunk(rest int) int {
	for _, size := range chunkRows {
		if size <= rest {
			return size
		}
	}
	return min(rest, exactRows)
}

// insert writes the batch: by one statement when one holds it (a statement is atomic
// on its own, and a transaction around it cost SQLite a BEGIN and a COMMIT parsed and
// run, and a statement journal), else in one transaction. The statements are prepared
// before the transaction begins: preparing takes a connection of the pool, and a
// transaction holds SQLite's write lock, so preparing inside it could wait for the
// pool's other connection while that one's writer waits for the lock, both until the
// busy timeout (and for ever on a pool of one).
func (s *statements) insert(ctx context.Context, batch []pending) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("audit database: %w", err)
	}
	var chunks []*sql.Stmt
	var sizes []int
	for rest := len(batch); rest > 0; {
		n := s.chunk(rest)
		st, err := s.stmt(ctx, sqlDB, n)
		if err != nil {
			return err
		}
		chunks, sizes = append(chunks, st), append(sizes, n)
		rest -= n
	}
	// Room for the batch's largest chunk, not for the largest statement: a batch of a
	// few calls' rows allocated 256 rows' arguments (53 KB) on every write.
	args := make([]any, 0, sizes[0]*len(columns))
	bind := func(rows []pending) []any {
		args = args[:0]
		for i := range rows {
			e := &rows[i].e
			args = append(args, e.ID, string(e.TenantID), e.At, string(e.Kind), e.Principal, e.KeyID, e.Tool, e.ConnectionID,
				e.Outcome, e.UpstreamStatus, e.LatencyMicros, e.ArgsHash, e.Detail, e.Node)
		}
		return args
	}
	if len(chunks) == 1 {
		if _, err := chunks[0].ExecContext(ctx, bind(batch)...); err != nil {
			return fmt.Errorf("insert %d audit events: %w", len(batch), err)
		}
		return nil
	}
	s.transactions.Add(1)
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin audit batch: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	rest := batch
	for i, st := range chunks {
		n := sizes[i]
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, bind(rest[:n])...); err != nil {
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
