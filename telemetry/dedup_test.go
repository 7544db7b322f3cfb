package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes (the summary timer).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the JSON lines written, as msg plus the attributes named.
func (l *lockedBuffer) lines(t *testing.T, keys ...string) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		s := rec["msg"].(string)
		for _, k := range keys {
			if v, ok := rec[k]; ok {
				b, _ := json.Marshal(v)
				s += " " + k + "=" + string(b)
			}
		}
		out = append(out, s)
	}
	return out
}

func newDedup(window time.Duration) (*DedupHandler, *lockedBuffer, *fakeClock) {
	out := &lockedBuffer{}
	clock := &fakeClock{now: time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)}
	h := NewDedupHandler(slog.NewJSONHandler(out, nil), window)
	h.state.now = clock.Now
	return h, out, clock
}

func TestDedupHandler(t *testing.T) {
	t.Parallel()
	down := errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")
	tests := []struct {
		name string
		run  func(log *slog.Logger, h *DedupHandler, clock *fakeClock)
		want []string
	}{
		{
			name: "a thousand repeats are one line, then a summary when the window ends",
			run: func(log *slog.Logger, h *DedupHandler, clock *fakeClock) {
				for range 1000 {
					log.Error("audit: database unavailable, retrying", "events", 3, "err", down)
				}
				clock.Add(time.Minute)
				h.Flush()
			},
			want: []string{
				`audit: database unavailable, retrying events=3`,
				`audit: database unavailable, retrying (repeated 999 times in 10s) events=3 repeated=999`,
			},
		},
		{
			name: "the next occurrence after the window writes the summary first",
			run: func(log *slog.Logger, _ *DedupHandler, clock *fakeClock) {
				log.Error("read MCP session", "err", down)
				log.Error("read MCP session", "err", down)
				clock.Add(11 * time.Second)
				log.Error("read MCP session", "err", down)
			},
			want: []string{`read MCP session`, `read MCP session (repeated 1 times in 10s) repeated=1`, `read MCP session`},
		},
		{
			name: "a window without repeats ends with no summary",
			run: func(log *slog.Logger, h *DedupHandler, clock *fakeClock) {
				log.Error("flush", "err", down)
				clock.Add(time.Minute)
				h.Flush()
				log.Error("flush", "err", down)
			},
			want: []string{`flush`, `flush`},
		},
		{
			name: "different errors, messages and levels are each written",
			run: func(log *slog.Logger, _ *DedupHandler, _ *fakeClock) {
				log.Error("open connection", "err", down)
				log.Error("open connection", "err", errors.New("timeout"))
				log.Error("close connection", "err", down)
				log.Warn("open connection", "err", down)
			},
			want: []string{`open connection`, `open connection`, `close connection`, `open connection`},
		},
		{
			name: "lines without an error are never folded",
			run: func(log *slog.Logger, _ *DedupHandler, _ *fakeClock) {
				for range 3 {
					log.Info("http request", "status", 200)
				}
			},
			want: []string{`http request`, `http request`, `http request`},
		},
		{
			name: "loggers derived with With share the window",
			run: func(log *slog.Logger, h *DedupHandler, clock *fakeClock) {
				log.With("component", "audit").Error("write", "error", "disk full")
				log.With("component", "runs").Error("write", "error", "disk full")
				clock.Add(time.Minute)
				h.Flush()
			},
			want: []string{`write`, `write (repeated 1 times in 10s) repeated=1`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, out, clock := newDedup(10 * time.Second)
			tt.run(slog.New(h), h, clock)
			if diff := cmp.Diff(tt.want, out.lines(t, "events", "repeated")); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDedupForgetsEndedWindows bounds the memory of errors seen once.
func TestDedupForgetsEndedWindows(t *testing.T) {
	t.Parallel()
	h, _, clock := newDedup(time.Second)
	log := slog.New(h)
	for i := range dedupMaxKeys + 10 {
		log.Error("unique", "err", errors.New(strings.Repeat("x", i%7)+time.Duration(i).String()))
		clock.Add(time.Second)
	}
	h.state.mu.Lock()
	n := len(h.state.seen)
	h.state.mu.Unlock()
	if n > dedupMaxKeys {
		t.Errorf("remembers %d errors, want at most %d", n, dedupMaxKeys)
	}
}

func TestTraceHandlerAddsTheSpansIDs(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	log := slog.New(TraceHandler{Next: slog.NewJSONHandler(&out, nil)})
	ctx := ContextFromMeta(context.Background(), map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	log.InfoContext(ctx, "in a request")
	log.Info("outside any request")
	want := []string{
		`in a request span_id="00f067aa0ba902b7" trace_id="4bf92f3577b34da6a3ce929d0e0e4736"`,
		`outside any request`,
	}
	if diff := cmp.Diff(want, out.lines(t, "span_id", "trace_id")); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestNewLogHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format  string
		want    string // the start of the line written
		wantErr bool
	}{
		{format: "", want: "time="},
		{format: LogText, want: "time="},
		{format: LogJSON, want: `{"time":`},
		{format: "xml", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			var out lockedBuffer
			h, err := NewLogHandler(&out, tt.format, slog.LevelInfo)
			if tt.wantErr {
				if err == nil {
					t.Error("no error for an unknown format")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx := ContextFromMeta(context.Background(), map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
			slog.New(h).DebugContext(ctx, "hidden")
			slog.New(h).ErrorContext(ctx, "shown", "err", "x")
			slog.New(h).ErrorContext(ctx, "shown", "err", "x") // folded
			got := out.b.String()
			if !strings.HasPrefix(got, tt.want) || strings.Count(got, "\n") != 1 || !strings.Contains(got, "4bf92f3577b34da6a3ce929d0e0e4736") || strings.Contains(got, "hidden") {
				t.Errorf("%s handler wrote %q", tt.format, got)
			}
		})
	}
}
