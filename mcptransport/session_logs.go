package mcptransport

import (
	"context"
	"log/slog"

	"github.com/switchboard-hub/switchboard/telemetry"
)

// HideSessionIDs returns a logger that writes what l writes with every session id
// replaced: mcp-go logs session ids (as attributes and inside error texts), and a
// session id is a credential of its principal's session.
func HideSessionIDs(l *slog.Logger) *slog.Logger {
	return slog.New(sessionIDsHidden{l.Handler()})
}

type sessionIDsHidden struct{ next slog.Handler }

func (h sessionIDsHidden) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h sessionIDsHidden) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, hide(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(hideAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h sessionIDsHidden) WithAttrs(attrs []slog.Attr) slog.Handler {
	hidden := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		hidden[i] = hideAttr(a)
	}
	return sessionIDsHidden{h.next.WithAttrs(hidden)}
}

func (h sessionIDsHidden) WithGroup(name string) slog.Handler {
	return sessionIDsHidden{h.next.WithGroup(name)}
}

func hide(s string) string { return telemetry.HideSessionIDs(s) }

func hideAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, hide(v.String()))
	case slog.KindGroup:
		group := v.Group()
		hidden := make([]any, len(group))
		for i, g := range group {
			hidden[i] = hideAttr(g)
		}
		return slog.Group(a.Key, hidden...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, hide(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, hide(s.String()))
		}
	}
	return a
}
