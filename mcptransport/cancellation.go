package mcptransport

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
)

// A posted request runs detached from its HTTP request: a client that drops the POST
// stream has not canceled the call (the spec: a disconnection is not a cancellation),
// so the call runs to its end, leaves its audit row saying how it went, and its answer
// is kept where mcp-go keeps a stream's events. Only notifications/cancelled (or the
// call's own deadline) stops it, and after that no answer for its id is written.

type connectionKey struct{}

// Detach returns ctx without its cancellation, keeping it as the connection's (see
// Connection).
func Detach(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), connectionKey{}, ctx)
}

// Connection is the context of the request's connection, which ends when the client
// goes away (ctx itself when the request was not detached).
func Connection(ctx context.Context) context.Context {
	if c, ok := ctx.Value(connectionKey{}).(context.Context); ok {
		return c
	}
	return ctx
}

// Cancels holds the cancel functions of the requests this node is serving: a
// session's by RequestKey, a stateless (2026-07-28) one's by CallKey (principal,
// endpoint and JSON-RPC id). mcp-go keys a modern request's cancellation by its id
// alone (a modern request has no session), so any caller of a scope could cancel
// another's request with the same id; the hub answers modern cancellations itself,
// for the caller's own requests only.
type Cancels struct {
	mu    sync.Mutex
	calls map[string]map[*context.CancelFunc]struct{}
}

// Add records a request's cancel function under key and returns the function that
// forgets it.
func (m *Cancels) Add(key string, cancel context.CancelFunc) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = map[string]map[*context.CancelFunc]struct{}{}
	}
	if m.calls[key] == nil {
		m.calls[key] = map[*context.CancelFunc]struct{}{}
	}
	ref := &cancel
	m.calls[key][ref] = struct{}{}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.calls[key], ref)
		if len(m.calls[key]) == 0 {
			delete(m.calls, key)
		}
	}
}

// Cancel cancels every request recorded under key.
func (m *Cancels) Cancel(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ref := range m.calls[key] {
		(*ref)()
	}
}

// CallKey names a stateless request of a principal at an endpoint (its agent, "" at
// the tenant URL) by its JSON-RPC id.
func CallKey(principal, agentID string, id json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, id) != nil {
		compact.Write(id)
	}
	return principal + "\x00" + agentID + "\x00" + compact.String()
}

// RequestKey names a request of a session by its JSON-RPC id.
func RequestKey(session string, id json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, id) != nil {
		compact.Write(id)
	}
	return "session\x00" + session + "\x00" + compact.String()
}

// NewSilencer returns a Silencer writing to w.
func NewSilencer(w http.ResponseWriter) *Silencer { return &Silencer{w: w} }

// Silencer passes a response through until Silence, after which nothing more is
// written; a response silenced before it began is a 202 with no body.
type Silencer struct {
	w       http.ResponseWriter
	mu      sync.Mutex
	quiet   bool
	started bool
}

// Silence drops whatever is written from now on.
func (s *Silencer) Silence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quiet = true
}

func (s *Silencer) Header() http.Header { return s.w.Header() }

func (s *Silencer) WriteHeader(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet || s.started {
		return
	}
	s.started = true
	s.w.WriteHeader(status)
}

func (s *Silencer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet {
		return len(p), nil // the answer of a canceled request goes nowhere
	}
	s.started = true
	return s.w.Write(p)
}

func (s *Silencer) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.w.(http.Flusher); ok && !s.quiet {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (write deadlines).
func (s *Silencer) Unwrap() http.ResponseWriter { return s.w }

// Finish ends a response silenced before it began as a 202 with no body.
func (s *Silencer) Finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet && !s.started {
		s.started = true
		s.w.Header().Del("Content-Type")
		s.w.WriteHeader(http.StatusAccepted)
	}
}
