package mcpadapter

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call of a session answers as an SSE stream whose first event is a priming
// event (an id and no data, as 2025-11-25 has servers prime a client to reconnect):
// a client that loses the stream before the answer (the call runs on, see
// serveRequest) GETs the MCP URL with the session id and that id as Last-Event-ID and
// is replayed the answer. mcp-go records the call's messages when it streams them; an
// answer it writes as one JSON body is recorded and sent here as the stream's event.

// primes reports whether a request of the session is answered on a primed stream:
// a tools/call, of a version that knows priming events, from a client that reads SSE.
func primes(r *http.Request, msg jsonrpcShape, version string) bool {
	return msg.Method == string(mcp.MethodToolsCall) && version >= mcp.ProtocolVersion20251125 &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// primePost starts the answer of a posted request of the session as an SSE stream
// with a priming event, and returns the writer and request to serve it with and the
// function that ends the stream (recording and sending an answer left as JSON).
func (s *scope) primePost(w http.ResponseWriter, r *http.Request, session string) (http.ResponseWriter, *http.Request, func()) {
	p := s.events.prime(session)
	ctx := withPrimer(r.Context(), p)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	pw := &primedWriter{w: w, store: s.events, ctx: ctx, primer: p}
	// The client may be gone already: the answer is recorded all the same.
	_, _ = fmt.Fprintf(w, "id: %s\ndata: \n\n", p.id)
	pw.Flush()
	return pw, r.WithContext(ctx), pw.finish
}

// primedWriter passes mcp-go's SSE events through and keeps a JSON answer to record
// and send as an event when the request ends. Headers and status are the stream's.
type primedWriter struct {
	w      http.ResponseWriter
	store  *eventStore
	ctx    context.Context
	primer *primer

	mu   sync.Mutex
	json bool // the answer is a JSON body, kept in body
	body bytes.Buffer
}

func (pw *primedWriter) Header() http.Header { return pw.w.Header() }

func (pw *primedWriter) WriteHeader(int) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.json = strings.HasPrefix(pw.w.Header().Get("Content-Type"), "application/json")
}

func (pw *primedWriter) Write(b []byte) (int, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.json {
		return pw.body.Write(b)
	}
	return pw.w.Write(b)
}

func (pw *primedWriter) Flush() {
	if f, ok := pw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (write deadlines).
func (pw *primedWriter) Unwrap() http.ResponseWriter { return pw.w }

// finish records a JSON answer on the primer's stream and sends it as an event, and
// releases a client waiting to resume.
func (pw *primedWriter) finish() {
	defer pw.primer.settle()
	pw.mu.Lock()
	msg := bytes.TrimSpace(pw.body.Bytes())
	pw.mu.Unlock()
	if len(msg) == 0 {
		return
	}
	pw.store.mu.Lock()
	stream := pw.primer.stream
	pw.store.mu.Unlock()
	id, err := pw.store.StoreEvent(pw.ctx, pw.primer.session, stream, msg)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(pw.w, "id: %s\nevent: message\ndata: %s\n\n", id, msg)
	pw.Flush()
}
