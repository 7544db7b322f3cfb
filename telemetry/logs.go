package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Log formats SWITCHBOARD_LOG_FORMAT takes.
const (
	LogText = "text"
	LogJSON = "json"
)

// DedupWindow is how long the log handler folds repeats of one error into a summary.
const DedupWindow = 10 * time.Second

// NewLogHandler returns the hub's log handler: text (the default) or JSON lines on w
// at the level given; each line logged with a request's context carries its trace_id
// and span_id, and an error repeated within DedupWindow is written once, then
// summarised ("repeated N times").
func NewLogHandler(w io.Writer, format string, level slog.Leveler) (slog.Handler, error) {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch format {
	case LogText, "":
		h = slog.NewTextHandler(w, opts)
	case LogJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q is not one of text, json", format)
	}
	return NewDedupHandler(TraceHandler{Next: h}, DedupWindow), nil
}

// TraceHandler adds the trace_id and span_id of the span in a record's context, so
// every line of a request can be found with its trace (and with the other lines of
// the request). Log with the *Context methods (InfoContext, ErrorContext, LogAttrs).
type TraceHandler struct{ Next slog.Handler }

// Enabled implements slog.Handler.
func (h TraceHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.Next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h TraceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h TraceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return TraceHandler{Next: h.Next.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (h TraceHandler) WithGroup(name string) slog.Handler {
	return TraceHandler{Next: h.Next.WithGroup(name)}
}
