package mcpadapter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcptransport"
)

// tunnelProxy forwards requests to backend and, as HAProxy in tunnel mode does, keeps
// its connection to the backend when the client leaves, until it fails to pass on what
// the backend writes.
func tunnelProxy(t *testing.T, backend string) *httptest.Server {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	// The connections to the backend end with the proxy, not with their clients.
	life, endLife := context.WithCancel(context.Background())
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out, _ := http.NewRequestWithContext(life, r.Method, backend+r.URL.RequestURI(), bytes.NewReader(body))
		out.Header = r.Header.Clone()
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close() // closes the backend connection
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_ = http.NewResponseController(w).Flush() // the headers go at once, as the backend sent them
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if http.NewResponseController(w).Flush() != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(func() {
		endLife()
		p.Close()
		tr.CloseIdleConnections()
	})
	return p
}

// TestAbandonedStreamsAreReaped opens GET streams through a proxy that keeps the
// node's connection when a client leaves, and lets the clients go without a DELETE:
// the heartbeat finds them gone, and each stream's open request (the key recheck's
// subscription), its session's place in use and its count are released.
func TestAbandonedStreamsAreReaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := &mcptransport.KeepAlive{Every: 10 * time.Millisecond}
	node := httptest.NewServer(k.Handler(e.adapter))
	t.Cleanup(node.Close)
	proxy := tunnelProxy(t, node.URL)
	// Streams still open when the test ends (it failed) end with the adapter, before
	// the servers wait for their handlers.
	t.Cleanup(func() { e.adapter.Close(context.Background()) })

	const streams = 3
	var bodies []io.ReadCloser
	for range streams {
		bodies = append(bodies, openStream(t, proxy.URL, "acme", "key-alice"))
	}
	streaming := func() int {
		e.adapter.mu.Lock()
		defer e.adapter.mu.Unlock()
		n := 0
		for _, s := range e.adapter.scopes {
			n += len(s.ep.Streaming())
		}
		return n
	}
	open := func() int { return len(e.adapter.openWhere(func(*openRequest) bool { return true })) }
	testwait.Until(t, "the streams to open", func() bool { return k.Open() == streams })
	if o, s := open(), streaming(); o != streams || s != streams {
		t.Fatalf("with %d clients streaming: %d open requests, %d sessions streaming; want %d each", streams, o, s, streams)
	}
	for _, b := range bodies {
		b.Close() // the client leaves: its connection to the proxy closes
	}
	testwait.Until(t, "the abandoned streams to be reaped", func() bool {
		return k.Open() == 0 && open() == 0 && streaming() == 0
	})
}
