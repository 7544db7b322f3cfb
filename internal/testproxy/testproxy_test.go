package testproxy_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testproxy"
)

// TestBodyArrivesWholeAndAnswersStream: a body the client streams (chunked) reaches the
// server whole, with its length, and the server's event stream, flushed as it goes,
// reaches the client event by event; the rewrite's header is added and the Host kept.
func TestBodyArrivesWholeAndAnswersStream(t *testing.T) {
	t.Parallel()
	type seen struct {
		length        int64
		chunked       bool
		body, auth    string
		host, wantHst string
	}
	got := make(chan seen, 1)
	next := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{length: r.ContentLength, chunked: len(r.TransferEncoding) > 0, body: string(b), auth: r.Header.Get("Authorization"), host: r.Host}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-next
		_, _ = io.WriteString(w, "data: second\n\n")
	}))
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(testproxy.New(target, func(r *httputil.ProxyRequest) { r.Out.Header.Set("Authorization", "Bearer k") }))
	defer front.Close()

	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, `{"jsonrpc":"2.0",`)
		_, _ = io.WriteString(pw, `"id":1,"method":"ping"}`)
		_ = pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, front.URL+"/mcp/default", pr) // no length: sent chunked
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "hub.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	s := <-got
	if s.body != `{"jsonrpc":"2.0","id":1,"method":"ping"}` || s.length != int64(len(s.body)) || s.chunked {
		t.Errorf("the server got %q with length %d (chunked %v), want the whole body with its length", s.body, s.length, s.chunked)
	}
	if s.auth != "Bearer k" || s.host != "hub.example" {
		t.Errorf("the server got Authorization %q and Host %q", s.auth, s.host)
	}
	rd := bufio.NewReader(res.Body)
	if line, err := rd.ReadString('\n'); err != nil || strings.TrimSpace(line) != "data: first" {
		t.Fatalf("the first event read %q, %v: the stream was not passed on as it came", line, err)
	}
	close(next)
	rest, err := io.ReadAll(rd)
	if err != nil || !strings.Contains(string(rest), "data: second") {
		t.Errorf("the rest of the stream read %q, %v", rest, err)
	}
}

// TestLongBodyIsRefused: a body over MaxBody is refused with 413, and the server never
// sees the request.
func TestLongBodyIsRefused(t *testing.T) {
	t.Parallel()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the server got a request of %d bytes", r.ContentLength)
	}))
	defer backend.Close()
	target, _ := url.Parse(backend.URL)
	front := httptest.NewServer(testproxy.New(target, nil))
	defer front.Close()
	res, err := http.Post(front.URL, "application/json", strings.NewReader(strings.Repeat("x", testproxy.MaxBody+1)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", res.StatusCode)
	}
}
