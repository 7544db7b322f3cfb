package audit

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// WriterOptions tune a Writer; zero values take the defaults.
type WriterOptions struct {
	QueueSize int // events buffered before Record blocks; default 4096
	// BatchSize is how many events recorded with Record (nobody waiting) gather before
	// they are written without waiting for FlushInterval; default 256.
	BatchSize int
	// MaxBatch bounds the events one transaction writes: under load, events that
	// arrive while a batch is being written all go into the next one (group commit),
	// so batches grow with the load up to this; default 4096 (BatchSize when only that
	// is set).
	MaxBatch      int
	FlushInterval time.Duration // longest a Record-ed event waits for its batch; default 50 ms
	Logger        *slog.Logger  // where write failures are reported; default slog.Default()
	// Metrics, when set, times each batch written.
	Metrics *telemetry.Metrics
}

// Writer records events off the request path, in group commits. Commit queues an
// event and waits until the transaction holding it has committed; Record queues one
// and returns. One goroutine writes: everything queued while a transaction runs goes
// into the next, so the more callers wait, the bigger and fewer the transactions, and
// the database is never the bottleneck of the calls it records. When the queue is full
// Record and Commit block: audit is never dropped to keep up.
type Writer struct {
	db       *gorm.DB
	opts     WriterOptions
	events   chan pending
	flushes  chan chan error
	stop     chan struct{}
	done     chan struct{}
	mu       sync.RWMutex // guards closed against Record racing Close
	closed   bool
	stopOnce sync.Once
	// down is set while the database does not answer, so callers refuse work that
	// must be audited instead of waiting for it.
	down  atomic.Bool
	stmts *statements
	// gate is held while a batch is written, so the database's checkpointer empties
	// SQLite's log between batches (see database.WriteGate).
	gate *database.Gate
	// queued counts the events ever put on the queue, so a test can tell when every
	// caller it started has queued its event.
	queued atomic.Int64
}

// yieldRounds bounds the rounds a batch that someone waits for lets the other ready
// goroutines run before it is written.
const yieldRounds = 4

// pending is a queued event and, for Commit, where its transaction's outcome goes.
type pending struct {
	e    Event
	done chan error
}

var _ Recorder = (*Writer)(nil)

// NewWriter starts a Writer on db. Close it to flush and stop.
func NewWriter(db *gorm.DB, opts WriterOptions) *Writer {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	switch {
	case opts.MaxBatch > 0:
	case opts.BatchSize > 0:
		opts.MaxBatch = opts.BatchSize // a caller that sized batches keeps them so
	default:
		opts.MaxBatch = 4096
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	opts.MaxBatch = max(opts.MaxBatch, opts.BatchSize)
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 50 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Writer{
		db:      db,
		opts:    opts,
		events:  make(chan pending, opts.QueueSize),
		flushes: make(chan chan error),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		stmts:   newStatements(db),
		gate:    database.WriteGate(db),
	}
	go w.loop()
	return w
}

// Record assigns the event an ID and a time if it has none and queues it. After Close
// it writes the event at once.
func (w *Writer) Record(e Event) {
	e = normalize(e)
	w.mu.RLock()
	if !w.closed {
		w.events <- pending{e: e}
		w.queued.Add(1)
		w.mu.RUnlock()
		return
	}
	w.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.write(ctx, []pending{{e: e}})
}

// Commit queues the event like Record and returns once the transaction holding it has
// committed: an answer sent after Commit returns nil has its audit row, whatever
// happens to the process next. It returns an error when ctx ends first (the event is
// still written later) or when the database refused the row.
func (w *Writer) Commit(ctx context.Context, e Event) error {
	e = normalize(e)
	done := make(chan error, 1)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return w.writeNow(ctx, e)
	}
	select {
	case w.events <- pending{e: e, done: done}:
		w.queued.Add(1)
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return fmt.Errorf("queue audit event: %w", ctx.Err())
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("commit audit event: %w", ctx.Err())
	}
}

// writeNow writes one event after Close, in its own transaction.
func (w *Writer) writeNow(ctx context.Context, e Event) error {
	done := make(chan error, 1)
	w.write(ctx, []pending{{e: e, done: done}})
	select {
	case err := <-done:
		return err
	default:
		return fmt.Errorf("commit audit event: %w", ctx.Err())
	}
}

// Saturated reports whether the writer cannot take more work that must be audited:
// the database does not answer, or the queue is nine-tenths full. Callers about to
// start such work refuse it then, rather than hang.
func (w *Writer) Saturated() bool {
	return w.down.Load() || len(w.events) >= cap(w.events)*9/10
}

// QueueLen is how many events wait to be written.
func (w *Writer) QueueLen() int { return len(w.events) }

// Flush writes every event recorded before it was called.
func (w *Writer) Flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case w.flushes <- reply:
	case <-w.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("flush audit: %w", ctx.Err())
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("flush audit: %w", ctx.Err())
	}
}

// Close writes what is queued and stops the writer. Events recorded afterwards are
// written one by one.
func (w *Writer) Close(ctx context.Context) error {
	// Records blocked on a full queue hold the read lock; wait for them only as long
	// as ctx allows.
	go func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.stopOnce.Do(func() { close(w.stop) })
	}()
	select {
	case <-w.done:
		w.stmts.close()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close audit writer: %w", ctx.Err())
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	ticker := time.NewTicker(w.opts.FlushInterval)
	defer ticker.Stop()
	batch := make([]pending, 0, w.opts.BatchSize)
	waiting := false // someone waits on an event of the batch: write it now
	flush := func() {
		if len(batch) == 0 {
			return
		}
		w.write(context.Background(), batch)
		clear(batch)
		batch = batch[:0]
		waiting = false
	}
	add := func(p pending) {
		batch = append(batch, p)
		waiting = waiting || p.done != nil
		if len(batch) >= w.opts.MaxBatch {
			flush()
		}
	}
	// gather takes what else is queued right now, without waiting: the group that
	// commits together.
	gather := func() {
		for len(batch) < w.opts.MaxBatch {
			select {
			case p := <-w.events:
				add(p)
			default:
				return
			}
		}
	}
	// gatherRunnable lets the goroutines that are ready to run go first, for a few
	// rounds while they bring more events, and takes those: on a busy node the calls
	// that finish meanwhile share the transaction, instead of each paying for its own
	// (a row alone cost SQLite about four times the CPU of a row in a batch of 16).
	// An idle node has nothing else ready to run and writes at once. A round may
	// bring nothing because the scheduler ran the writer first (it takes a yielded
	// goroutine ahead of the others now and then, for fairness), so only a second
	// empty round in a row ends the wait.
	gatherRunnable := func() {
		empty := 0
		for range yieldRounds {
			before := len(batch)
			if before >= w.opts.MaxBatch {
				return
			}
			runtime.Gosched()
			gather()
			if len(batch) > before {
				empty = 0
			} else if empty++; empty == 2 {
				return
			}
		}
	}
	drain := func() {
		for {
			gather()
			if len(w.events) == 0 {
				flush()
				return
			}
		}
	}
	for {
		select {
		case p := <-w.events:
			add(p)
			gather()
			if waiting {
				gatherRunnable()
			}
			if waiting || len(batch) >= w.opts.BatchSize {
				flush()
			}
		case <-ticker.C:
			flush()
		case reply := <-w.flushes:
			drain()
			reply <- nil
		case <-w.stop:
			drain()
			return
		}
	}
}

// write commits a batch in one transaction of prepared multi-row INSERTs, then tells
// each waiting caller. If that fails while the database answers, a row must be at
// fault: the rows are written one by one and only the ones the database refuses are
// reported and skipped (their callers get the error). While the database does not
// answer, write retries with backoff, holding the queue (and so, once it fills,
// Record) and marking the writer down.
func (w *Writer) write(ctx context.Context, batch []pending) {
	backoff := 50 * time.Millisecond
	for {
		start := time.Now()
		w.gate.Enter()
		err := w.stmts.insert(ctx, batch)
		w.gate.Leave()
		w.opts.Metrics.AuditFlush(len(batch), time.Since(start), err)
		if err == nil {
			w.down.Store(false)
			for _, p := range batch {
				if p.done != nil {
					p.done <- nil
				}
			}
			return
		}
		if w.db.WithContext(ctx).Exec("SELECT 1").Error == nil {
			w.down.Store(false)
			w.writeEach(ctx, batch, err)
			return
		}
		w.down.Store(true)
		w.opts.Logger.Error("audit: database unavailable, retrying", "events", len(batch), "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			for _, p := range batch {
				if p.done != nil {
					p.done <- fmt.Errorf("write audit event: %w", ctx.Err())
				}
			}
			return
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (w *Writer) writeEach(ctx context.Context, batch []pending, batchErr error) {
	for i := range batch {
		// The batch's own statement for one row: a row already written (a retry) or in
		// flight (its completion) is completed, not refused as a duplicate.
		err := w.stmts.insert(ctx, batch[i:i+1])
		if err != nil {
			w.opts.Logger.Error("audit: event refused by the database", "id", batch[i].e.ID, "tenant", batch[i].e.TenantID, "kind", batch[i].e.Kind, "err", err, "batch_err", batchErr)
			err = fmt.Errorf("write audit event %s: %w", batch[i].e.ID, err)
		}
		if batch[i].done != nil {
			batch[i].done <- err
		}
	}
}

// normalize fills the ID and time and cuts text to the column sizes, so that one odd
// event cannot make its whole batch fail.
func normalize(e Event) Event {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.ID == "" {
		e.ID = switchboard.NewOrderedID("aud", e.At)
	}
	e.At = e.At.UTC().Truncate(time.Microsecond)
	if e.Outcome == "" {
		e.Outcome = "ok"
	}
	e.Principal = truncate(e.Principal, 64)
	e.KeyID = truncate(e.KeyID, 40)
	e.Tool = truncate(e.Tool, 64)
	e.ConnectionID = truncate(e.ConnectionID, 40)
	e.Outcome = truncate(e.Outcome, 32)
	e.ArgsHash = truncate(e.ArgsHash, 64)
	e.Detail = truncate(e.Detail, 500)
	e.Kind = Kind(truncate(string(e.Kind), 32))
	return e
}

// truncate cuts s to at most n characters (PostgreSQL's varchar counts characters).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // replaces invalid bytes, which PostgreSQL would refuse
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
