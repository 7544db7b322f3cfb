package mcpadapter

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
	"github.com/mark3labs/mcp-go/server"
)

// A tools/call of a session answers on its own POST stream, and what belongs to the
// call goes there, before its result: its progress, its log messages, the requests a
// remote server makes during it. mcp-go v1.2 queues a session's notifications on one
// channel that every stream of the session reads, its GET stream included (with an
// event store, a pump reads it for as long as the session lives once a GET stream was
// opened), so a call's progress could leave on the GET stream, after the result.
//
// So the hub keeps each such call's stream itself. A callStream records every message
// of the call in the scope's event store and writes it, in the same order, to the
// connection attached to the stream: the POST's, or a GET that resumed the stream with
// Last-Event-ID (which the hub serves, see resume). The hub's own notifications of the
// call are sent there (scope.deliver); mcp-go's messages of the call (server requests,
// a notification its forwarder took from the session's queue, an answer it streams)
// reach the store through StoreEvent, which sees the call in the context, and are
// written there too. What mcp-go writes to the POST itself is dropped, except an
// answer written as one JSON body: the stream's last event when the answer is a
// stream, passed through as it is when nothing was streamed.

// A stateless (2026-07-28) call has a callStream too, with no store: that version has
// no resumption, so its events are written and not recorded. Without it, mcp-go's
// forwarder, which takes a request's notifications off its queue one at a time, could
// hold one when the call answered; the answer then went out and that notification was
// dropped, so a client lost one of a call's progress notifications now and then.

// callStream is the SSE stream of one tools/call of a session, or of a stateless call.
type callStream struct {
	store   *eventStore // nil for a stateless call: nothing is recorded
	session string

	// stream is where the store keeps the call's events: the call's own until mcp-go
	// records a message of the call on a stream of its own, then that one (bound), so
	// that an event id mcp-go handed out and one the hub did name one stream. Both are
	// guarded by the store's mu.
	stream string
	bound  bool

	// canceled is set by notifications/cancelled: nothing more is recorded or sent
	// for the call, so no answer follows its cancellation.
	canceled atomic.Bool

	mu      sync.Mutex
	conn    *streamConn // where events are written; nil when nothing is attached
	started bool        // the POST's answer started as an SSE stream
	closed  bool        // the call's last message was recorded
	done    chan struct{}
}

// streamConn is a connection a call's events are written to.
type streamConn struct {
	w    http.ResponseWriter
	post bool // the call's own POST, whose SSE headers go with the first event
	gone chan struct{}
}

var (
	// errCanceledCall refuses to record a message of a canceled call.
	errCanceledCall = errors.New("the call was canceled: nothing more is recorded for it")
	// errCallEnded refuses a message after the call's answer; it goes the session's way.
	errCallEnded = errors.New("the call has answered")
)

type callStreamKey struct{}

func withCallStream(ctx context.Context, cs *callStream) context.Context {
	return context.WithValue(ctx, callStreamKey{}, cs)
}

func callStreamFrom(ctx context.Context) *callStream {
	cs, _ := ctx.Value(callStreamKey{}).(*callStream)
	return cs
}

// openCall starts the stream of a call of the session answered on w (the POST), with
// a priming event first when primed (an id and no data, as 2025-11-25 has servers prime
// a client to reconnect).
func (s *eventStore) openCall(session string, w http.ResponseWriter, primed bool) *callStream {
	cs := &callStream{store: s, session: session, stream: fmt.Sprintf("call-%d", s.calls.Add(1)), done: make(chan struct{})}
	cs.conn = &streamConn{w: w, post: true, gone: make(chan struct{})}
	if primed {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		id := s.addCall(cs, "", nil)
		cs.writeLocked(id, nil)
	}
	return cs
}

// openStatelessCall starts the stream of a stateless call answered on w (the POST):
// its events are written, with no id, and not recorded.
func openStatelessCall(w http.ResponseWriter) *callStream {
	return &callStream{done: make(chan struct{}), conn: &streamConn{w: w, post: true, gone: make(chan struct{})}}
}

// record records msg as the call's next event and returns its id; a stateless call
// records nothing, and its events have no id.
func (cs *callStream) record(stream string, msg json.RawMessage) string {
	if cs.store == nil {
		return ""
	}
	return cs.store.addCall(cs, stream, msg)
}

// add records msg as the call's next event (mcp-go names its stream) and writes it to
// the attached connection.
func (cs *callStream) add(stream string, msg json.RawMessage) (string, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.canceled.Load() {
		return "", errCanceledCall
	}
	if cs.closed {
		return "", errCallEnded
	}
	id := cs.record(stream, msg)
	cs.writeLocked(id, msg)
	return id, nil
}

// notify sends a notification of the call on its stream.
func (cs *callStream) notify(n mcp.JSONRPCNotification) error {
	msg, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = cs.add("", msg)
	return err
}

// writeLocked writes an event to the attached connection (a priming event when msg is
// nil, an event without an id when id is empty); a connection that fails is detached,
// and the event stays recorded for a resumption. Callers hold mu.
func (cs *callStream) writeLocked(id string, msg json.RawMessage) {
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
		_, err = fmt.Fprintf(c.w, "id: %s\ndata: \n\n", id)
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

func (cs *callStream) detachLocked() {
	if cs.conn != nil {
		close(cs.conn.gone)
		cs.conn = nil
	}
}

// end ends the POST's part of the call once mcp-go has answered through cw: an answer
// written as one JSON body is recorded and sent as the stream's last event when the
// answer is a stream, and passed through as it is when nothing was streamed.
func (cs *callStream) end(cw *callWriter) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	defer func() {
		cs.closed = true
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
func (cs *callStream) resume(w http.ResponseWriter, r *http.Request, lastEventID string) {
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

// callWriter is what mcp-go answers a call with a stream through: its SSE bytes are
// dropped (their events reach the stream through StoreEvent) unless keepSSE (a
// stateless call, whose events no store sees), and an answer written as one body is
// kept for end.
type callWriter struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	sse     bool
	keepSSE bool
	body    bytes.Buffer
}

func newCallWriter(keepSSE bool) *callWriter {
	return &callWriter{header: http.Header{}, keepSSE: keepSSE}
}

func (cw *callWriter) Header() http.Header { return cw.header }

func (cw *callWriter) WriteHeader(status int) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.writeHeaderLocked(status)
}

func (cw *callWriter) writeHeaderLocked(status int) {
	if cw.status != 0 {
		return
	}
	cw.status = status
	cw.sse = strings.HasPrefix(cw.header.Get("Content-Type"), "text/event-stream")
}

func (cw *callWriter) Write(p []byte) (int, error) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.writeHeaderLocked(http.StatusOK)
	if cw.sse && !cw.keepSSE {
		return len(p), nil
	}
	return cw.body.Write(p)
}

// Flush makes mcp-go take the writer for one that streams.
func (cw *callWriter) Flush() {}

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

// deliver sends a notification of the calling client's request through send, given
// the context to send with: on the call's own stream when the request is a call of a
// session (callStream), on the session's queue otherwise (see queue).
func (s *scope) deliver(ctx context.Context, send func(context.Context) error) {
	if cs := callStreamFrom(ctx); cs != nil {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			rs := &routedSession{ClientSession: sess, ch: make(chan mcp.JSONRPCNotification, 1)}
			if err := send(s.mcp.WithContext(ctx, rs)); err != nil {
				return
			}
			select {
			case n := <-rs.ch:
				if err := cs.notify(n); !errors.Is(err, errCallEnded) {
					return
				}
			default:
				return // mcp-go sent nothing (a log line under the session's level)
			}
		}
	}
	queue(ctx, func() error { return send(ctx) })
}

// routedSession is the calling session as mcp-go's senders see it when the hub sends
// a notification of one call: what they queue lands on ch, for the call's stream.
// It does not switch the session's answers to SSE (the call's stream is the hub's).
type routedSession struct {
	server.ClientSession
	ch chan mcp.JSONRPCNotification
}

func (r *routedSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return r.ch }

// GetLogLevel is the session's level, which mcp-go's log sender compares with.
func (r *routedSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := r.ClientSession.(server.SessionWithLogging); ok {
		return l.GetLogLevel()
	}
	return mcp.LoggingLevelError
}

func (r *routedSession) SetLogLevel(level mcp.LoggingLevel) {
	if l, ok := r.ClientSession.(server.SessionWithLogging); ok {
		l.SetLogLevel(level)
	}
}

var _ server.SessionWithLogging = (*routedSession)(nil)
