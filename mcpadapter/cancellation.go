package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// A posted request runs detached from its HTTP request: a client that drops the POST
// stream has not canceled the call (the spec: a disconnection is not a cancellation),
// so the call runs to its end, leaves its audit row saying how it went, and its answer
// is kept where mcp-go keeps a stream's events. Only notifications/cancelled (or the
// call's own deadline) stops it, and after that no answer for its id is written.

type connectionKey struct{}

// detach returns ctx without its cancellation, keeping it as the connection's (see
// connection).
func detach(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), connectionKey{}, ctx)
}

// connection is the context of the request's connection, which ends when the client
// goes away (ctx itself when the request was not detached).
func connection(ctx context.Context) context.Context {
	if c, ok := ctx.Value(connectionKey{}).(context.Context); ok {
		return c
	}
	return ctx
}

// serveRequest hands a posted JSON-RPC request (its context detached from its
// connection by ServeHTTP) to the scope's server, and silences its answer once key is
// canceled (see cancelSessionCall). cancel, when set, is also called then (the modern
// era, whose cancellations the hub makes itself; mcp-go makes a session's). stream,
// when set, is a call answered on a stream the hub keeps (mcptransport.CallStream): primed first
// when primed.
func (a *Adapter) serveRequest(w http.ResponseWriter, r *http.Request, s *scope, key string, cancel context.CancelFunc, stream *streamPlan) {
	sw := &silencer{w: w}
	defer sw.finish()
	var out http.ResponseWriter = s.ep.IDs.Writer(sw)
	var cs *mcptransport.CallStream
	if stream != nil {
		if stream.stateless {
			cs = mcptransport.OpenStatelessCall(sw)
		} else {
			cs = s.ep.Events.OpenCall(stream.session, sw, stream.primed)
		}
		cw := mcptransport.NewCallWriter(stream.stateless)
		out = cw
		r = r.WithContext(mcptransport.WithCallStream(r.Context(), cs))
		defer cs.End(cw)
	}
	defer a.modern.add(key, func() {
		sw.silence()
		if cs != nil {
			cs.Cancel() // nor is its answer recorded for a resumption
		}
		if cancel != nil {
			cancel()
		}
	})()
	if stream != nil && stream.plain != nil {
		s.answerPlain(out, r, stream.plain)
		return
	}
	s.ep.HTTP.ServeHTTP(out, r)
}

// streamPlan says how a call is streamed (see serveRequest): a call of a session, or
// a stateless one (2026-07-28), whose stream is not recorded; and whether the adapter
// answers it itself (plain, see plain_calls.go).
type streamPlan struct {
	session   string
	primed    bool
	stateless bool
	plain     *plainCall
}

// requestKey names a request of a session by its JSON-RPC id.
func requestKey(session string, id json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, id) != nil {
		compact.Write(id)
	}
	return "session\x00" + session + "\x00" + compact.String()
}

// cancelSessionCall silences the answer of the session's request that a
// notifications/cancelled body names, before mcp-go cancels it.
func (a *Adapter) cancelSessionCall(session string, body []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodNotificationCancelled) || !mcptransport.ValidID(msg.Params.RequestID) {
		return
	}
	a.modern.cancel(requestKey(session, msg.Params.RequestID))
}

// silencer passes a response through until silence, after which nothing more is
// written; a response silenced before it began is a 202 with no body.
type silencer struct {
	w       http.ResponseWriter
	mu      sync.Mutex
	quiet   bool
	started bool
}

func (s *silencer) silence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quiet = true
}

func (s *silencer) Header() http.Header { return s.w.Header() }

func (s *silencer) WriteHeader(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet || s.started {
		return
	}
	s.started = true
	s.w.WriteHeader(status)
}

func (s *silencer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet {
		return len(p), nil // the answer of a canceled request goes nowhere
	}
	s.started = true
	return s.w.Write(p)
}

func (s *silencer) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.w.(http.Flusher); ok && !s.quiet {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (write deadlines).
func (s *silencer) Unwrap() http.ResponseWriter { return s.w }

func (s *silencer) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet && !s.started {
		s.started = true
		s.w.Header().Del("Content-Type")
		s.w.WriteHeader(http.StatusAccepted)
	}
}
