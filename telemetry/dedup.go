package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DedupHandler writes a log record that carries an error ("err" or "error") once per
// window: repeats of the same level, message and error text within the window are
// counted, not written, and when the window ends one line says how often it repeated
// ("… (repeated N times)", with repeated=N). A database that is down for twenty
// seconds then costs a few lines, not thousands. Records without an error pass as
// they are.
type DedupHandler struct {
	next  slog.Handler
	state *dedupState
}

type dedupState struct {
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	seen map[dedupKey]*dedupEntry
}

type dedupKey struct {
	level slog.Level
	msg   string
	err   string
}

type dedupEntry struct {
	until      time.Time
	suppressed int
	last       slog.Record  // the last suppressed record, for the summary
	next       slog.Handler // the handler (with its attributes) that got it
	timer      *time.Timer
}

// dedupMaxKeys bounds the errors remembered; beyond it, ended windows are forgotten.
const dedupMaxKeys = 1024

// NewDedupHandler returns a DedupHandler writing to next.
func NewDedupHandler(next slog.Handler, window time.Duration) *DedupHandler {
	return &DedupHandler{next: next, state: &dedupState{window: window, now: time.Now, seen: map[dedupKey]*dedupEntry{}}}
}

// Enabled implements slog.Handler.
func (h *DedupHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// WithAttrs implements slog.Handler.
func (h *DedupHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &DedupHandler{next: h.next.WithAttrs(as), state: h.state}
}

// WithGroup implements slog.Handler.
func (h *DedupHandler) WithGroup(name string) slog.Handler {
	return &DedupHandler{next: h.next.WithGroup(name), state: h.state}
}

// Handle implements slog.Handler.
func (h *DedupHandler) Handle(ctx context.Context, r slog.Record) error {
	errText, ok := recordError(r)
	if !ok {
		return h.next.Handle(ctx, r)
	}
	s := h.state
	key := dedupKey{level: r.Level, msg: r.Message, err: errText}
	now := s.now()
	s.mu.Lock()
	e := s.seen[key]
	if e != nil && now.Before(e.until) {
		e.suppressed++
		e.last, e.next = r.Clone(), h.next
		if e.timer == nil {
			e.timer = time.AfterFunc(e.until.Sub(now), func() { s.flush(key, e) })
		}
		s.mu.Unlock()
		return nil
	}
	var summary *dedupEntry
	if e != nil {
		summary = s.end(key, e)
	}
	if len(s.seen) >= dedupMaxKeys {
		s.forgetEnded(now)
	}
	s.seen[key] = &dedupEntry{until: now.Add(s.window)}
	s.mu.Unlock()
	if summary != nil {
		_ = summary.write(s.window)
	}
	return h.next.Handle(ctx, r)
}

// Flush writes the summaries of windows that have ended; a timer does it by itself
// when a window with repeats ends.
func (h *DedupHandler) Flush() {
	s := h.state
	now := s.now()
	var summaries []*dedupEntry
	s.mu.Lock()
	for k, e := range s.seen {
		if !now.Before(e.until) {
			if sum := s.end(k, e); sum != nil {
				summaries = append(summaries, sum)
			}
		}
	}
	s.mu.Unlock()
	for _, e := range summaries {
		_ = e.write(s.window)
	}
}

// flush is the timer's: it ends the entry's window if it is still the current one.
func (s *dedupState) flush(key dedupKey, e *dedupEntry) {
	s.mu.Lock()
	if s.seen[key] != e {
		s.mu.Unlock()
		return
	}
	sum := s.end(key, e)
	s.mu.Unlock()
	if sum != nil {
		_ = sum.write(s.window)
	}
}

// end forgets a window and returns it when it has repeats to summarise. Call with mu held.
func (s *dedupState) end(key dedupKey, e *dedupEntry) *dedupEntry {
	delete(s.seen, key)
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.suppressed == 0 {
		return nil
	}
	return e
}

// forgetEnded drops windows that ended without repeats. Call with mu held.
func (s *dedupState) forgetEnded(now time.Time) {
	for k, e := range s.seen {
		if e.suppressed == 0 && !now.Before(e.until) {
			delete(s.seen, k)
		}
	}
}

// write logs the summary of a window's repeats.
func (e *dedupEntry) write(window time.Duration) error {
	r := slog.NewRecord(e.last.Time, e.last.Level, fmt.Sprintf("%s (repeated %d times in %s)", e.last.Message, e.suppressed, window), 0)
	e.last.Attrs(func(a slog.Attr) bool {
		r.AddAttrs(a)
		return true
	})
	r.AddAttrs(slog.Int("repeated", e.suppressed))
	return e.next.Handle(context.Background(), r)
}

// recordError returns the text of a record's "err" or "error" attribute.
func recordError(r slog.Record) (string, bool) {
	var text string
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" || a.Key == "error" {
			text, found = a.Value.String(), true
			return false
		}
		return true
	})
	return text, found
}
