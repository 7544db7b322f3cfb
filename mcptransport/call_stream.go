package mcptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/sessions"
)

// A tools/call of a session answers on its own POST stream, and what belongs to the
// call goes there, before its result: its progress, its log messages, the requests a
// remote server makes during it. mcp-go v1.2 queues a session's notifications on one
// channel that every stream of the session reads, its GET stream included (with an
// event store, a pump reads it for as long as the session lives once a GET stream was
// opened), so a call's progress could leave on the GET stream, after the result.
//
// So the hub keeps each such call's stream itself. A CallStream records every message
// of the call in the scope's event store and writes it, in the same order, to the
// connection attached to the stream: the POST's, or a GET that resumed the stream with
// Last-Event-ID (which the hub serves, see resume). The hub's own notifications of the
// call are sent there (Notify); mcp-go's messages of the call (server requests,
// a notification its forwarder took from the session's queue, an answer it streams)
// reach the store through StoreEvent, which sees the call in the context, and are
// written there too. What mcp-go writes to the POST itself is dropped, except an
// answer written as one JSON body: the stream's last event when the answer is a
// stream, passed through as it is when nothing was streamed.

// A stateless (2026-07-28) call has a CallStream too, with no store: that version has
// no resumption, so its events are written and not recorded. Without it, mcp-go's
// forwarder, which takes a request's notifications off its queue one at a time, could
// hold one when the call answered; the answer then went out and that notification was
// dropped, so a client lost one of a call's progress notifications now and then.

// CallStream is the SSE stream of one tools/call of a session, or of a stateless call.
type CallStream struct {
	store   *EventStore // nil for a stateless call: nothing is recorded
	session string

	// stream is where the store keeps the call's events: the call's own until mcp-go
	// records a message of the call on a stream of its own, then that one (bound), so
	// that an event id mcp-go handed out and one the hub did name one stream. Both are
	// guarded by the store's mu.
	stream string
	bound  bool

	// key names the call's stream in the store's Log, fleet-unique.
	key string

	// canceled is set by notifications/cancelled: nothing more is recorded or sent
	// for the call, so no answer follows its cancellation.
	canceled atomic.Bool

	mu      sync.Mutex
	conn    *streamConn // where events are written; nil when nothing is attached
	started bool        // the POST's answer started as an SSE stream
	closed  bool        // the call's last message was recorded
	done    chan struct{}

	recorded int         // the events recorded for the call so far
	logged   bool        // the call's events go to the store's Log (its client left)
	unwatch  func() bool // stops KeepWhenGone's watch of the POST's connection
}

// streamConn is a connection a call's events are written to.
type streamConn struct {
	w    http.ResponseWriter
	post bool // the call's own POST, whose SSE headers go with the first event
	gone chan struct{}
}

var (
	// ErrCanceledCall refuses to record a message of a canceled call.
	ErrCanceledCall = errors.New("the call was canceled: nothing more is recorded for it")
	// ErrCallEnded refuses a message after the call's answer; it goes the session's way.
	ErrCallEnded = errors.New("the call has answered")
)

type callStreamKey struct{}

func WithCallStream(ctx context.Context, cs *CallStream) context.Context {
	return context.WithValue(ctx, callStreamKey{}, cs)
}

func CallStreamFrom(ctx context.Context) *CallStream {
	cs, _ := ctx.Value(callStreamKey{}).(*CallStream)
	return cs
}

// openCall starts the stream of a call of the session answered on w (the POST), with
// a priming event first when primed (an id and no data, as 2025-11-25 has servers prime
// a client to reconnect).
func (s *EventStore) OpenCall(session string, w http.ResponseWriter, primed bool) *CallStream {
	name := fmt.Sprintf("%scall-%d", s.prefix, s.calls.Add(1))
	cs := &CallStream{store: s, session: session, stream: name, key: name, done: make(chan struct{})}
	cs.conn = &streamConn{w: w, post: true, gone: make(chan struct{})}
	if primed {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		id := cs.record("", nil)
		cs.writeLocked(id, nil)
	}
	return cs
}

// Session is the id of the session whose call it is ("" for a stateless call).
func (cs *CallStream) Session() string { return cs.session }

// Cancel records that the call was canceled (notifications/cancelled): nothing more
// is recorded or sent for it, its answer included.
func (cs *CallStream) Cancel() { cs.canceled.Store(true) }

// OpenStatelessCall starts the stream of a stateless call answered on w (the POST):
// its events are written, with no id, and not recorded.
func OpenStatelessCall(w http.ResponseWriter) *CallStream {
	return &CallStream{done: make(chan struct{}), conn: &streamConn{w: w, post: true, gone: make(chan struct{})}}
}

// record records msg as the call's next event and returns its id; a stateless call
// records nothing, and its events have no id. Callers hold mu.
func (cs *CallStream) record(stream string, msg json.RawMessage) string {
	if cs.store == nil {
		return ""
	}
	id := cs.store.addCall(cs, stream, msg)
	cs.recorded++
	if cs.logged {
		cs.store.logEvents(cs, []sessions.StreamEvent{{ID: id, Seq: cs.recorded - 1, Message: msg}})
	}
	return id
}

// KeepWhenGone has the call's stream kept in the store's Log from the moment the
// POST's connection (conn) ends before the call has answered: what was recorded so
// far, then every event as it comes, and a last mark when the call ends. The client
// may then resume on any node (EventStore.ResumeLogged). A call whose client stays
// costs nothing more.
func (cs *CallStream) KeepWhenGone(conn context.Context) {
	if cs.store == nil || cs.store.Log == nil {
		return
	}
	stop := context.AfterFunc(conn, cs.Keep)
	cs.mu.Lock()
	cs.unwatch = stop
	cs.mu.Unlock()
}

// Keep starts keeping the call's stream in the Log: the events the store holds of it,
// the last mark if the call has ended, and every event from then on. It is done when
// the POST's connection ends (KeepWhenGone), and when the call's client came back on
// another node before this one saw it leave (RelayKeepStream).
func (cs *CallStream) Keep() {
	if cs.store == nil || cs.store.Log == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.logged || cs.canceled.Load() {
		return
	}
	cs.logged = true
	held := cs.store.callEvents(cs)
	events := make([]sessions.StreamEvent, 0, len(held)+1)
	for i, ev := range held {
		events = append(events, sessions.StreamEvent{ID: ev.id, Seq: cs.recorded - len(held) + i, Message: ev.msg})
	}
	if cs.closed {
		events = append(events, cs.lastMark())
	}
	cs.store.logEvents(cs, events)
}

// lastMark is the Log's record that the call's stream has ended.
func (cs *CallStream) lastMark() sessions.StreamEvent {
	return sessions.StreamEvent{ID: cs.key + "_end", Seq: cs.recorded, Last: true}
}

// Release lets the call's client poll for the rest: the POST's connection is detached,
// so the call's next events, its answer included, are only recorded, and the client
// resumes the stream with Last-Event-ID (Resume) to get them. It reports whether it
// did: only a recorded stream (a session's), primed and still on its POST, before the
// call's answer, is released. The caller ends the POST's exchange (EndExchange).
func (cs *CallStream) Release() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.store == nil || cs.recorded == 0 || cs.closed || cs.canceled.Load() || cs.conn == nil || !cs.conn.post || !cs.started {
		return false
	}
	cs.detachLocked()
	return true
}

// add records msg as the call's next event (mcp-go names its stream) and writes it to
// the attached connection.
func (cs *CallStream) Add(stream string, msg json.RawMessage) (string, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.canceled.Load() {
		return "", ErrCanceledCall
	}
	if cs.closed {
		return "", ErrCallEnded
	}
	id := cs.record(stream, msg)
	cs.writeLocked(id, msg)
	return id, nil
}

// notify sends a notification of the call on its stream.
func (cs *CallStream) Notify(n mcp.JSONRPCNotification) error {
	msg, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = cs.Add("", msg)
	return err
}

// writeLocked writes an event to the attached connection (a priming event when msg is
// nil, an event without an id when id is empty); a connection that fails is detached,
// and the event stays recorded for a resumption. Callers hold mu.
func (cs *CallStream) writeLocked(id string, msg json.RawMessage) {
	c := cs.conn
	if c == nil {
		return
	}
	if c.post && !cs.started {
		h := c.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Del("Content-Length")
		c.w.WriteHeader(http.StatusOK)
		cs.started = true
	}
	var err error
	switch {
	case msg == nil:
		// A priming event, with the time to wait before resuming a stream that ends
		// before the answer (the server may end it to have its client poll).
		retry := cs.store.Retry
		if retry <= 0 {
			retry = DefaultRetry
		}
		_, err = fmt.Fprintf(c.w, "id: %s\nretry: %d\ndata: \n\n", id, retry.Milliseconds())
	case id == "":
		_, err = fmt.Fprintf(c.w, "event: message\ndata: %s\n\n", msg)
	default:
		_, err = fmt.Fprintf(c.w, "id: %s\nevent: message\ndata: %s\n\n", id, msg)
	}
	if err != nil {
		cs.detachLocked()
		return
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (cs *CallStream) detachLocked() {
	if cs.conn != nil {
		close(cs.conn.gone)
		cs.conn = nil
	}
}

// end ends the POST's part of the call once mcp-go has answered through cw: an answer
// written as one JSON body is recorded and sent as the stream's last event when the
// answer is a stream, and passed through as it is when nothing was streamed.
func (cs *CallStream) End(cw *CallWriter) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	defer func() {
		cs.closed = true
		if cs.unwatch != nil {
			cs.unwatch()
		}
		if cs.logged {
			cs.store.logEvents(cs, []sessions.StreamEvent{cs.lastMark()})
		}
		close(cs.done)
		if cs.conn != nil && cs.conn.post {
			cs.detachLocked()
		}
	}()
	cw.mu.Lock()
	defer cw.mu.Unlock()
	body := bytes.TrimSpace(cw.body.Bytes())
	if cs.canceled.Load() {
		return
	}
	if cw.sse {
		if cs.store == nil {
			// A stateless call's events reach no store: mcp-go's stream is passed on.
			for _, data := range sseData(body) {
				cs.writeLocked("", data)
			}
		}
		return // a session's: mcp-go's events were recorded and written as they came
	}
	if c := cs.conn; c != nil && c.post && !cs.started {
		for k, v := range cw.header {
			c.w.Header()[k] = v
		}
		if cw.status != 0 {
			c.w.WriteHeader(cw.status)
		}
		_, _ = c.w.Write(cw.body.Bytes())
		return
	}
	if len(body) == 0 || !json.Valid(body) {
		return
	}
	var compact bytes.Buffer
	if json.Compact(&compact, body) != nil {
		return
	}
	id := cs.record("", compact.Bytes())
	cs.writeLocked(id, compact.Bytes())
}

// resume serves a GET that resumes the call's stream after lastEventID: the events
// recorded since, then the call's next ones live until its answer, the client's
// departure or another resumption.
func (cs *CallStream) Resume(w http.ResponseWriter, r *http.Request, lastEventID string) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	conn := &streamConn{w: w, gone: make(chan struct{})}
	cs.mu.Lock()
	cs.detachLocked() // a newer resumption takes over
	cs.conn = conn
	for _, ev := range cs.store.eventsAfter(cs.session, lastEventID) {
		if ev.msg != nil {
			cs.writeLocked(ev.id, ev.msg)
		}
	}
	if cs.closed && cs.conn == conn {
		cs.detachLocked()
	}
	cs.mu.Unlock()
	select {
	case <-conn.gone:
	case <-cs.done:
	case <-r.Context().Done():
	}
	cs.mu.Lock()
	if cs.conn == conn {
		cs.detachLocked()
	}
	cs.mu.Unlock()
}

// CallWriter is what mcp-go answers a call with a stream through: its SSE bytes are
// dropped (their events reach the stream through StoreEvent) unless keepSSE (a
// stateless call, whose events no store sees), and an answer written as one body is
// kept for end.
type CallWriter struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	sse     bool
	keepSSE bool
	body    bytes.Buffer
}

func NewCallWriter(keepSSE bool) *CallWriter {
	return &CallWriter{header: http.Header{}, keepSSE: keepSSE}
}

func (cw *CallWriter) Header() http.Header { return cw.header }

func (cw *CallWriter) WriteHeader(status int) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.writeHeaderLocked(status)
}

func (cw *CallWriter) writeHeaderLocked(status int) {
	if cw.status != 0 {
		return
	}
	cw.status = status
	cw.sse = strings.HasPrefix(cw.header.Get("Content-Type"), "text/event-stream")
}

func (cw *CallWriter) Write(p []byte) (int, error) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.writeHeaderLocked(http.StatusOK)
	if cw.sse && !cw.keepSSE {
		return len(p), nil
	}
	return cw.body.Write(p)
}

// Flush makes mcp-go take the writer for one that streams.
func (cw *CallWriter) Flush() {}

// sseData returns the data of each event of an SSE stream, its lines joined.
func sseData(stream []byte) []json.RawMessage {
	var out []json.RawMessage
	for _, event := range bytes.Split(bytes.ReplaceAll(stream, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
		var data [][]byte
		for _, line := range bytes.Split(event, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(d, []byte(" ")))
			}
		}
		if len(data) > 0 {
			out = append(out, bytes.Join(data, []byte("\n")))
		}
	}
	return out
}

// SSEData returns the data of each event of an SSE stream, its lines joined.
func SSEData(stream []byte) []json.RawMessage { return sseData(stream) }

// Answer is what mcp-go has answered through cw: a JSON body, or the SSE stream kept
// for a stateless call.
func (cw *CallWriter) Answer() []byte {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return bytes.Clone(cw.body.Bytes())
}

// Replace drops what mcp-go answered through cw and answers with b (its status,
// header and body) in its place.
func (cw *CallWriter) Replace(b *BufferWriter) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.header = b.Header().Clone()
	cw.status, cw.sse = b.Status, false
	cw.body.Reset()
	cw.body.Write(b.Body.Bytes())
}
