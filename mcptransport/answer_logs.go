package mcptransport

import (
	"context"
	"log/slog"
	"strings"
)

// QuietRelayedAnswers returns a logger that writes what l writes, except that mcp-go's
// error about a client's answer with no request pending on this node (a confirmation
// or elicitation asked by a call running on another node) is written at debug level:
// the hub relays such an answer to the node where the request is pending, and it is
// answered there, so it is no error.
func QuietRelayedAnswers(l *slog.Logger) *slog.Logger {
	return slog.New(relayedAnswers{l.Handler()})
}

type relayedAnswers struct{ next slog.Handler }

// mcp-go's message and error text for an answer to no request it has pending.
const (
	answerFailedMessage = "Failed to handle sampling response"
	noPendingRequest    = "no pending request found"
)

func (h relayedAnswers) Enabled(ctx context.Context, level slog.Level) bool {
	// An error is let in to be looked at: it may be one to write at debug level.
	return h.next.Enabled(ctx, level) || level == slog.LevelError
}

func (h relayedAnswers) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && r.Message == answerFailedMessage && pendingElsewhere(r) {
		if !h.next.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		out := slog.NewRecord(r.Time, slog.LevelDebug, "client answer to a request not pending on this node: relayed to the node where it is", r.PC)
		r.Attrs(func(a slog.Attr) bool {
			out.AddAttrs(a)
			return true
		})
		return h.next.Handle(ctx, out)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// pendingElsewhere reports whether the record's error says no request is pending.
func pendingElsewhere(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			v := a.Value.Resolve()
			var text string
			if err, ok := v.Any().(error); ok {
				text = err.Error()
			} else {
				text = v.String()
			}
			found = strings.HasPrefix(text, noPendingRequest)
			return false
		}
		return true
	})
	return found
}

func (h relayedAnswers) WithAttrs(attrs []slog.Attr) slog.Handler {
	return relayedAnswers{h.next.WithAttrs(attrs)}
}

func (h relayedAnswers) WithGroup(name string) slog.Handler {
	return relayedAnswers{h.next.WithGroup(name)}
}
