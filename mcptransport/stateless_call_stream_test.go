package mcptransport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestStatelessCallStream: a stateless call's stream writes the hub's notifications as
// they come and then the answer mcp-go wrote, in that order and without event ids
// (2026-07-28 has no resumption); an answer with nothing streamed before it passes
// through as it is, status and all; and what mcp-go streamed itself is passed on.
func TestStatelessCallStream(t *testing.T) {
	t.Parallel()
	progress := func(n int) mcp.JSONRPCNotification {
		return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: "notifications/progress", Params: mcp.NotificationParams{AdditionalFields: map[string]any{"progressToken": "t", "progress": n}},
		}}
	}
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`

	t.Run("notifications then the answer", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		cs := OpenStatelessCall(rec)
		for i := 1; i <= 3; i++ {
			if err := cs.Notify(progress(i)); err != nil {
				t.Fatal(err)
			}
		}
		cw := NewCallWriter(true)
		cw.Header().Set("Content-Type", "application/json")
		cw.WriteHeader(http.StatusOK)
		_, _ = cw.Write([]byte(answer + "\n"))
		cs.End(cw)
		if got := rec.Header().Get("Content-Type"); got != "text/event-stream" {
			t.Fatalf("Content-Type %q, want text/event-stream", got)
		}
		body := rec.Body.String()
		if strings.Contains(body, "id:") {
			t.Fatalf("a stateless stream's events carry ids:\n%s", body)
		}
		var got []string
		for _, data := range sseData([]byte(body)) {
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Progress int `json:"progress"`
				} `json:"params"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(data, &msg); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			if msg.Method != "" {
				got = append(got, fmt.Sprintf("%s %d", msg.Method, msg.Params.Progress))
			} else {
				got = append(got, "answer "+string(data))
			}
		}
		want := []string{"notifications/progress 1", "notifications/progress 2", "notifications/progress 3", "answer " + answer}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("events (-want +got):\n%s", d)
		}
		if err := cs.Notify(progress(4)); err == nil {
			t.Fatal("a notification after the answer was taken by the ended stream")
		}
	})

	t.Run("an answer alone passes through", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		cs := OpenStatelessCall(rec)
		cw := NewCallWriter(true)
		cw.Header().Set("Content-Type", "application/json")
		cw.WriteHeader(http.StatusBadRequest)
		_, _ = cw.Write([]byte(answer))
		cs.End(cw)
		if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != answer {
			t.Fatalf("got %d %q %s, want the answer as written", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	})

	t.Run("mcp-go's own stream is passed on", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		cs := OpenStatelessCall(rec)
		if err := cs.Notify(progress(1)); err != nil {
			t.Fatal(err)
		}
		cw := NewCallWriter(true)
		cw.Header().Set("Content-Type", "text/event-stream")
		cw.WriteHeader(http.StatusOK)
		_, _ = cw.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"))
		_, _ = cw.Write([]byte("event: message\ndata: " + answer + "\n\n"))
		cs.End(cw)
		data := sseData(rec.Body.Bytes())
		if len(data) != 3 || string(data[2]) != answer || !strings.Contains(string(data[1]), "notifications/message") {
			t.Fatalf("events %q, want the hub's progress, mcp-go's notification, the answer", data)
		}
	})
}
