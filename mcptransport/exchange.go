package mcptransport

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
)

// A posted request's work may end its HTTP exchange before the work itself ends: a
// call that lets its client poll (SEP-1699) closes its SSE stream after the events so
// far and runs on, and the client resumes the stream with Last-Event-ID for the rest.
// An HTTP handler cannot end its response and go on, so the work of such a request
// runs in a goroutine of its own (ServeOutliving) while the handler waits for it or
// for EndExchange, and returns at the first; from then on what the work writes goes
// nowhere.

// MayOutlive reports whether a request's work may end its exchange early: a POST of a
// session (only a session's streams resume) from a client that reads SSE.
func MayOutlive(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

type exchangeKey struct{}

// exchange is the response writer of work served by ServeOutliving.
type exchange struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	ended bool
	dead  http.Header // the header handed out after the end
	end   chan struct{}
}

// ServeOutliving serves the request with work in a goroutine of its own and returns
// when work returns, or as soon as work ends the exchange (EndExchange) while it runs
// on. A panic of work before the end is the handler's own; after it, it is logged.
func ServeOutliving(w http.ResponseWriter, r *http.Request, logger *slog.Logger, work func(http.ResponseWriter, *http.Request)) {
	x := &exchange{w: w, end: make(chan struct{})}
	done := make(chan any, 1)
	go func() {
		finished := false
		defer func() {
			if finished {
				done <- nil
				return
			}
			v := recover()
			if x.endedNow() {
				if logger != nil {
					logger.Error("a request's work panicked after its exchange ended", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				}
				return
			}
			done <- panicked{v}
		}()
		work(x, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
		finished = true
	}()
	select {
	case v := <-done:
		if p, ok := v.(panicked); ok {
			panic(p.v)
		}
	case <-x.end:
	}
}

type panicked struct{ v any }

// EndExchange ends the HTTP exchange of the request whose work ctx belongs to: the
// handler returns and its response is complete, and the work runs on writing nowhere.
// It reports whether it did: false for a request not served by ServeOutliving, or
// already ended.
func EndExchange(ctx context.Context) bool {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	if x == nil {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		return false
	}
	x.ended = true
	close(x.end)
	return true
}

// Outlives reports whether the request whose work ctx belongs to may end its exchange
// (EndExchange): it is served by ServeOutliving and has not ended it yet.
func Outlives(ctx context.Context) bool {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x != nil && !x.endedNow()
}

func (x *exchange) endedNow() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.ended
}

func (x *exchange) Header() http.Header {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		if x.dead == nil {
			x.dead = http.Header{}
		}
		return x.dead
	}
	return x.w.Header()
}

func (x *exchange) WriteHeader(status int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended {
		x.w.WriteHeader(status)
	}
}

func (x *exchange) Write(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		return len(p), nil // the exchange is over: nobody reads this
	}
	return x.w.Write(p)
}

func (x *exchange) Flush() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if f, ok := x.w.(http.Flusher); ok && !x.ended {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection while the exchange lasts.
func (x *exchange) Unwrap() http.ResponseWriter {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended {
		return nil
	}
	return x.w
}
