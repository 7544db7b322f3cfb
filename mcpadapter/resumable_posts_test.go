package mcpadapter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// sseEvent is one event of an SSE stream.
type sseEvent struct {
	id    string
	retry string
	data  string
}

// readEvent reads the stream's next event; io.EOF when the stream ended.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	seen := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && seen {
				return ev, nil
			}
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				return ev, nil
			}
			continue
		}
		seen = true
		switch field, value, _ := strings.Cut(line, ":"); field {
		case "id":
			ev.id = strings.TrimPrefix(value, " ")
		case "retry":
			ev.retry = strings.TrimPrefix(value, " ")
		case "data":
			ev.data += strings.TrimPrefix(value, " ")
		}
	}
}

// resume GETs the MCP URL in the session with Last-Event-ID and returns the HTTP
// status and the events of the answer's stream, read to its end.
func (h *heldCallEnv) resume(t *testing.T, session, lastEventID string) (int, []sseEvent) {
	t.Helper()
	status, events, err := h.resumeStream(session, lastEventID)
	if err != nil {
		t.Fatal(err)
	}
	return status, events
}

// resumeStream is resume for any goroutine.
func (h *heldCallEnv) resumeStream(session, lastEventID string) (int, []sseEvent, error) {
	// A deadline for the test, not a timing condition: the stream ends by itself.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", h.protocolVersion())
	req.Header.Set("Last-Event-ID", lastEventID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("GET with Last-Event-ID %s: %w", lastEventID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil, nil
	}
	var events []sseEvent
	br := bufio.NewReader(resp.Body)
	for {
		ev, err := readEvent(br)
		if err == io.EOF {
			return resp.StatusCode, events, nil
		}
		if err != nil {
			return 0, nil, fmt.Errorf("read the resumed stream: %w (events so far %+v)", err, events)
		}
		events = append(events, ev)
	}
}

// answersOf returns the JSON-RPC answers (results and errors) among the events for id.
func answersOf(t *testing.T, events []sseEvent, id string) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	for _, ev := range events {
		if ev.data == "" {
			continue
		}
		var msg map[string]json.RawMessage
		if err := json.Unmarshal([]byte(ev.data), &msg); err != nil {
			t.Fatalf("event %s is not JSON: %q", ev.id, ev.data)
		}
		if ev.id == "" {
			t.Errorf("an event without an id: %s", ev.data)
		}
		if string(msg["id"]) == id && msg["method"] == nil {
			out = append(out, msg)
		}
	}
	return out
}

// primedCall posts heldCall in the session and returns the priming event's id, with
// the function that drops the POST stream (waiting for the hub to see it go).
func (h *heldCallEnv) primedCall(t *testing.T, session string) (string, func()) {
	t.Helper()
	ctx, drop := context.WithCancel(context.Background())
	t.Cleanup(drop)
	type started struct {
		resp *http.Response
		err  error
	}
	start := make(chan started, 1)
	go func() {
		resp, err := h.post(ctx, session, heldCall, true)
		start <- started{resp, err}
	}()
	server := testwait.Recv(t, h.serverCx, "the call to reach the hub")
	// The upstream holds the call: only a stream primed before the answer starts now.
	st := testwait.Recv(t, start, "the tools/call's answer to start with its priming event while the upstream holds the call")
	if st.err != nil {
		t.Fatal(st.err)
	}
	resp := st.resp
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered HTTP %d %q, want 200 text/event-stream", resp.StatusCode, ct)
	}
	first, err := readEvent(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatalf("read the priming event: %v", err)
	}
	if first.id == "" || first.data != "" {
		t.Fatalf("first event = %+v, want a priming event (an id, no data)", first)
	}
	// It tells the client how long to wait before it resumes a stream that ended
	// before the answer (the default, Options.StreamRetry being unset).
	if first.retry != "1000" {
		t.Fatalf("the priming event's retry field is %q, want 1000 (ms)", first.retry)
	}
	return first.id, func() {
		drop()
		testwait.Recv(t, server.Done(), "the hub to see the client drop the stream")
	}
}

// A client that dropped its POST stream mid-call resumes it with Last-Event-ID and
// gets the call's answer once; resuming again replays it again; another session's
// id, or its own id in another session, is refused.
func TestDroppedPostStreamReplaysTheAnswer(t *testing.T) {
	t.Parallel()
	h := newHeldCallEnv(t)
	h.version = "2025-11-25"
	session := h.session(t)

	primed, drop := h.primedCall(t, session)
	testwait.Recv(t, h.arrived, "the call to reach the upstream")
	drop()
	close(h.release)
	if row := h.row(t); row.Outcome != "ok" {
		t.Fatalf("audit row outcome %q, want ok", row.Outcome)
	}

	for i := range 2 {
		status, events := h.resume(t, session, primed)
		if status != http.StatusOK {
			t.Fatalf("resume %d: HTTP %d, want 200", i+1, status)
		}
		answers := answersOf(t, events, "7")
		if len(answers) != 1 {
			t.Fatalf("resume %d: %d answers for id 7, want 1; events %+v", i+1, len(answers), events)
		}
		if answers[0]["result"] == nil || strings.Contains(string(answers[0]["result"]), `"isError":true`) {
			t.Fatalf("resume %d: answer %v, want the call's result", i+1, answers[0])
		}
	}

	other := h.session(t)
	if status, events := h.resume(t, other, primed); status != http.StatusBadRequest {
		t.Errorf("another session resuming this session's stream: HTTP %d with %+v, want 400", status, events)
	}
	if status, _ := h.resume(t, session, "999999"); status != http.StatusBadRequest {
		t.Errorf("an id never issued: HTTP %d, want 400", status)
	}
}

// A client that resumes at once, while the call still runs, is held until the answer
// and replayed it.
func TestResumeWhileTheCallRuns(t *testing.T) {
	t.Parallel()
	h := newHeldCallEnv(t)
	h.version = "2025-11-25"
	session := h.session(t)

	primed, drop := h.primedCall(t, session)
	testwait.Recv(t, h.arrived, "the call to reach the upstream")
	drop()

	type resumed struct {
		status int
		events []sseEvent
		err    error
	}
	got := make(chan resumed, 1)
	go func() {
		status, events, err := h.resumeStream(session, primed)
		got <- resumed{status, events, err}
	}()
	close(h.release)
	r := testwait.Recv(t, got, "the resumed stream to end")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.status != http.StatusOK {
		t.Fatalf("resume: HTTP %d, want 200", r.status)
	}
	if answers := answersOf(t, r.events, "7"); len(answers) != 1 || answers[0]["result"] == nil {
		t.Fatalf("resume: answers for id 7 %v, want one result; events %+v", answers, r.events)
	}
}
