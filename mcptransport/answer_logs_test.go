package mcptransport

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestQuietRelayedAnswers: mcp-go's error about an answer with no request pending on
// this node (relayed to the node where it is) is written at debug level; its other
// errors stay errors.
func TestQuietRelayedAnswers(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		l := QuietRelayedAnswers(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})))
		l.Error("Failed to handle sampling response", "err", errors.New("no pending request found for session s, request 3"))
		l.Error("Failed to handle sampling response", "err", errors.New("no active session found for session s"))
		l.Info("Rejected GET request")
		got := buf.String()
		if strings.Contains(got, "level=ERROR msg=\"Failed to handle sampling response\" err=\"no pending") {
			t.Errorf("at %s: an answer relayed elsewhere is logged as an error:\n%s", level, got)
		}
		if !strings.Contains(got, `level=ERROR msg="Failed to handle sampling response" err="no active session`) || !strings.Contains(got, "Rejected GET request") {
			t.Errorf("at %s: other lines lost:\n%s", level, got)
		}
		relayed := strings.Contains(got, "level=DEBUG msg=\"client answer to a request not pending on this node")
		if relayed != (level == slog.LevelDebug) {
			t.Errorf("at %s: debug line written = %v:\n%s", level, relayed, got)
		}
	}
}
