package mcptransport

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultHeartbeat is how often KeepAlive writes a heartbeat on an open SSE stream
// unless told otherwise: under the idle timeouts of common proxies and balancers (30 s
// and more), so that none of them closes a quiet stream.
const DefaultHeartbeat = 25 * time.Second

// Heartbeat is the SSE comment KeepAlive writes on an open stream. Clients ignore
// comments (lines starting with a colon); the event ids they resume from are untouched.
const Heartbeat = ": ping\n\n"

// KeepAlive serves MCP requests through next and writes a heartbeat on every response
// that is an SSE stream (a GET stream, a call answering with a stream, a resumption)
// every Every for as long as it stays open.
//
// The heartbeat keeps proxies from closing a quiet stream, and it finds a stream whose
// client is gone: behind a proxy that keeps its connection to the node open (HAProxy's
// tunnel timeout), a node never learns that the client left until it writes. A
// heartbeat the connection does not take ends the request's context, so the stream's
// goroutines, subscriptions and its session's place are released. A POST's call is
// detached from its request (the adapter's rules): it goes on and its events stay
// recorded for a resumption.
type KeepAlive struct {
	// Every is the interval between heartbeats; 0 or less writes none.
	Every time.Duration

	open atomic.Int64
}

// Open is how many SSE streams are open through the KeepAlive.
func (k *KeepAlive) Open() int64 { return k.open.Load() }

// Handler returns next with heartbeats on its SSE streams.
func (k *KeepAlive) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		kw := &keepAliveWriter{w: w, rc: http.NewResponseController(w), k: k, cancel: cancel, tail: [2]byte{'\n', '\n'}}
		defer kw.finish()
		next.ServeHTTP(kw, r.WithContext(ctx))
	})
}

// keepAliveWriter passes a response through, one write at a time, and writes a
// heartbeat between two events of an SSE stream.
type keepAliveWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	k      *KeepAlive
	cancel context.CancelFunc

	mu          sync.Mutex
	wroteHeader bool
	stream      bool    // the response is an SSE stream, counted in k.open
	tail        [2]byte // the last two bytes written: "\n\n" between events
	timer       *time.Timer
	done        bool // the handler returned: nothing more is written
	failed      bool // a heartbeat failed: the client is gone
}

func (kw *keepAliveWriter) Header() http.Header { return kw.w.Header() }

func (kw *keepAliveWriter) WriteHeader(status int) {
	kw.mu.Lock()
	defer kw.mu.Unlock()
	kw.writeHeaderLocked(status)
}

// writeHeaderLocked starts the heartbeats of a response that is an SSE stream.
func (kw *keepAliveWriter) writeHeaderLocked(status int) {
	if kw.wroteHeader {
		return
	}
	kw.wroteHeader = true
	kw.w.WriteHeader(status)
	if status != http.StatusOK || kw.done || !isEventStream(kw.w.Header()) {
		return
	}
	kw.stream = true
	kw.k.open.Add(1)
	if kw.k.Every > 0 {
		kw.timer = time.AfterFunc(kw.k.Every, kw.beat)
	}
}

func (kw *keepAliveWriter) Write(p []byte) (int, error) {
	kw.mu.Lock()
	defer kw.mu.Unlock()
	if !kw.wroteHeader {
		kw.writeHeaderLocked(http.StatusOK)
	}
	n, err := kw.w.Write(p)
	switch {
	case n >= 2:
		kw.tail = [2]byte{p[n-2], p[n-1]}
	case n == 1:
		kw.tail = [2]byte{kw.tail[1], p[0]}
	}
	return n, err
}

func (kw *keepAliveWriter) Flush() {
	kw.mu.Lock()
	defer kw.mu.Unlock()
	_ = kw.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (kw *keepAliveWriter) Unwrap() http.ResponseWriter { return kw.w }

// beat writes a heartbeat, unless an event is half written (it then comes at the next
// beat), and ends the request when the connection does not take it.
func (kw *keepAliveWriter) beat() {
	kw.mu.Lock()
	defer kw.mu.Unlock()
	if kw.done || kw.failed {
		return
	}
	if kw.tail == [2]byte{'\n', '\n'} {
		_, err := kw.w.Write([]byte(Heartbeat))
		if err == nil {
			err = kw.rc.Flush()
		}
		if err != nil {
			kw.failed = true
			kw.cancel()
			return
		}
	}
	kw.timer.Reset(kw.k.Every)
}

// finish stops the heartbeats once the handler returned.
func (kw *keepAliveWriter) finish() {
	kw.mu.Lock()
	defer kw.mu.Unlock()
	kw.done = true
	if kw.timer != nil {
		kw.timer.Stop()
	}
	if kw.stream {
		kw.k.open.Add(-1)
	}
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
}
