package mcptransport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sseLines reads an SSE stream line by line.
func sseLines(t *testing.T, body io.Reader) <-chan string {
	t.Helper()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

func TestKeepAliveSendsHeartbeatsBetweenEvents(t *testing.T) {
	t.Parallel()
	k := &KeepAlive{Every: 5 * time.Millisecond}
	more := make(chan struct{})
	srv := httptest.NewServer(k.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "id: 1\nevent: message\ndata: {\"n\":1}\n\n")
		w.(http.Flusher).Flush()
		<-more
		// An event written in pieces is never cut by a heartbeat.
		for _, part := range []string{"id: 2\n", "event: message\n", "data: {\"n\":2}\n", "\n"} {
			_, _ = io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []string
	pings, skip := 0, false
	for line := range sseLines(t, resp.Body) {
		if skip && line == "" {
			skip = false
			continue // the end of a heartbeat not recorded
		}
		if line == ": ping" {
			pings++
			if pings == 3 {
				close(more)
			}
			if pings > 3 {
				skip = true // more may come while the second event is written
				continue
			}
		}
		got = append(got, line)
	}
	// Heartbeats come only between whole events.
	want := []string{"id: 1", "event: message", `data: {"n":1}`, "",
		": ping", "", ": ping", "", ": ping", "",
		"id: 2", "event: message", `data: {"n":2}`, ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("stream (-want +got):\n%s", diff)
	}
	if k.Open() != 0 {
		t.Fatalf("open streams after the stream ended = %d, want 0", k.Open())
	}
}

func TestKeepAliveLeavesOtherAnswersAlone(t *testing.T) {
	t.Parallel()
	k := &KeepAlive{Every: time.Hour}
	rec := httptest.NewRecorder()
	k.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		kw := w.(*keepAliveWriter)
		if kw.timer != nil || k.Open() != 0 {
			t.Errorf("a JSON answer counts as a stream (open %d) or has a heartbeat", k.Open())
		}
	})).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp/t", nil))
	if rec.Body.String() != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("body = %q", rec.Body.String())
	}
}

// failingWriter is a connection the client has left: writes fail.
type failingWriter struct {
	header http.Header
	gone   bool
	body   strings.Builder
}

func (f *failingWriter) Header() http.Header { return f.header }
func (f *failingWriter) WriteHeader(int)     {}
func (f *failingWriter) Write(p []byte) (int, error) {
	if f.gone {
		return 0, errors.New("write: broken pipe")
	}
	return f.body.Write(p)
}
func (f *failingWriter) Flush() {}

func TestKeepAliveHeartbeatWaitsForTheEventsEnd(t *testing.T) {
	t.Parallel()
	k := &KeepAlive{Every: time.Hour}
	fw := &failingWriter{header: http.Header{"Content-Type": {"text/event-stream"}}}
	k.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := w.(*keepAliveWriter)
		w.WriteHeader(http.StatusOK)
		kw.beat()
		_, _ = io.WriteString(w, "id: 1\nevent: message\n")
		kw.beat() // the event is half written: no heartbeat
		_, _ = io.WriteString(w, "data: {}\n\n")
		kw.beat()
	})).ServeHTTP(fw, httptest.NewRequest(http.MethodGet, "/mcp/t", nil))
	want := ": ping\n\nid: 1\nevent: message\ndata: {}\n\n: ping\n\n"
	if fw.body.String() != want {
		t.Fatalf("stream = %q, want %q", fw.body.String(), want)
	}
}

func TestKeepAliveEndsTheRequestWhenTheClientIsGone(t *testing.T) {
	t.Parallel()
	k := &KeepAlive{Every: time.Hour}
	fw := &failingWriter{header: http.Header{"Content-Type": {"text/event-stream"}}}
	ended := make(chan struct{})
	k.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := w.(*keepAliveWriter)
		w.WriteHeader(http.StatusOK)
		if k.Open() != 1 {
			t.Errorf("open streams = %d, want 1", k.Open())
		}
		kw.beat()
		if r.Context().Err() != nil {
			t.Error("the request ended while its client was there")
		}
		fw.gone = true
		kw.beat()
		<-r.Context().Done() // what a GET stream waits for
		close(ended)
	})).ServeHTTP(fw, httptest.NewRequest(http.MethodGet, "/mcp/t", nil))
	<-ended
	if k.Open() != 0 {
		t.Fatalf("open streams = %d, want 0", k.Open())
	}
}

// holdingProxy forwards requests to backend and, as HAProxy in tunnel mode does, keeps
// its connection to the backend when the client leaves, until it fails to pass on what
// the backend writes.
func holdingProxy(t *testing.T, backend string) *httptest.Server {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	// The connections to the backend end with the proxy, not with their clients.
	life, endLife := context.WithCancel(context.Background())
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, _ := http.NewRequestWithContext(life, r.Method, backend+r.URL.Path, nil)
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

func TestKeepAliveReapsStreamsAbandonedBehindAProxy(t *testing.T) {
	// Not parallel: it counts goroutines.
	relay := NewLocalRelay()
	k := &KeepAlive{Every: 10 * time.Millisecond}
	ended := make(chan struct{}) // closed when the test ends, before the servers wait for their handlers
	node := httptest.NewServer(k.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A GET stream as the adapter serves one: a subscription held until the
		// request ends.
		stop := relay.Subscribe(func(RelayMessage) {})
		defer stop()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-ended:
		}
	})))
	defer node.Close()
	proxy := holdingProxy(t, node.URL)
	t.Cleanup(func() { close(ended) })
	subscribed := func() int {
		relay.mu.Lock()
		defer relay.mu.Unlock()
		return len(relay.subs)
	}
	before := runtime.NumGoroutine()

	const streams = 5
	for range streams {
		tr := &http.Transport{}
		resp, err := (&http.Client{Transport: tr}).Get(proxy.URL + "/mcp/t")
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != ": ping\n" {
			t.Fatalf("first line of the stream = %q, %v; want a heartbeat", line, err)
		}
		// The client leaves without a word: its connection closes.
		resp.Body.Close()
		tr.CloseIdleConnections()
	}
	waitFor(t, "abandoned streams reaped", func() bool {
		return subscribed() == 0 && k.Open() == 0 && runtime.NumGoroutine() <= before
	})
}

// waitFor polls until cond holds, failing the test after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not the case after 20 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
