package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// WriterOptions tune a Writer; zero values take the defaults.
type WriterOptions struct {
	QueueSize     int           // events buffered before Record blocks; default 4096
	BatchSize     int           // rows per INSERT; default 256
	FlushInterval time.Duration // longest an event waits for its batch; default 50 ms
	Logger        *slog.Logger  // where write failures are reported; default slog.Default()
}

// Writer records events off the request path: Record enqueues, and one goroutine
// writes them in batches, one INSERT per batch. When the queue is full Record blocks:
// audit is never dropped to keep up.
type Writer struct {
	db       *gorm.DB
	opts     WriterOptions
	events   chan Event
	flushes  chan chan error
	stop     chan struct{}
	done     chan struct{}
	mu       sync.RWMutex // guards closed against Record racing Close
	closed   bool
	stopOnce sync.Once
}

var _ Recorder = (*Writer)(nil)

// NewWriter starts a Writer on db. Close it to flush and stop.
func NewWriter(db *gorm.DB, opts WriterOptions) *Writer {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 50 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Writer{
		db:      db,
		opts:    opts,
		events:  make(chan Event, opts.QueueSize),
		flushes: make(chan chan error),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
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
		w.events <- e
		w.mu.RUnlock()
		return
	}
	w.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.write(ctx, []Event{e})
}

// Saturated reports whether the queue is nine-tenths full: the database is not keeping
// up or does not answer. Callers about to start work that must be audited refuse it
// then, rather than hang in Record.
func (w *Writer) Saturated() bool { return len(w.events) >= cap(w.events)*9/10 }

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
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close audit writer: %w", ctx.Err())
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	ticker := time.NewTicker(w.opts.FlushInterval)
	defer ticker.Stop()
	batch := make([]Event, 0, w.opts.BatchSize)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		w.write(context.Background(), batch)
		batch = batch[:0]
	}
	drain := func() {
		for {
			select {
			case e := <-w.events:
				batch = append(batch, e)
				if len(batch) >= w.opts.BatchSize {
					flush()
				}
			default:
				flush()
				return
			}
		}
	}
	for {
		select {
		case e := <-w.events:
			batch = append(batch, e)
			if len(batch) >= w.opts.BatchSize {
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

// write inserts a batch in one statement. If that fails while the database answers,
// a row must be at fault: the rows are written one by one and only the ones the
// database refuses are reported and skipped. While the database does not answer,
// write retries with backoff, holding the queue (and so, once it fills, Record).
func (w *Writer) write(ctx context.Context, batch []Event) {
	backoff := 50 * time.Millisecond
	for {
		err := w.db.WithContext(ctx).CreateInBatches(batch, len(batch)).Error
		if err == nil {
			return
		}
		if w.db.WithContext(ctx).Exec("SELECT 1").Error == nil {
			w.writeEach(ctx, batch, err)
			return
		}
		w.opts.Logger.Error("audit: database unavailable, retrying", "events", len(batch), "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (w *Writer) writeEach(ctx context.Context, batch []Event, batchErr error) {
	for i := range batch {
		err := w.db.WithContext(ctx).Create(&batch[i]).Error
		if err == nil || errors.Is(err, gorm.ErrDuplicatedKey) {
			continue
		}
		w.opts.Logger.Error("audit: event refused by the database", "id", batch[i].ID, "tenant", batch[i].TenantID, "kind", batch[i].Kind, "err", err, "batch_err", batchErr)
	}
}

// normalize fills the ID and time and cuts text to the column sizes, so that one odd
// event cannot make its whole batch fail.
func normalize(e Event) Event {
	if e.ID == "" {
		e.ID = switchboard.NewID("aud")
	}
	if e.At.IsZero() {
		e.At = time.Now()
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
