package providertest

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// Request is one request the fake upstream received.
type Request struct {
	Method string
	Path   string // the decoded URL path, e.g. /repos/octo/hello/issues
	Query  url.Values
	Header http.Header
	Body   []byte
	// ContentType is the media type of the Content-Type header without its
	// parameters ("application/json", not "application/json; charset=utf-8"); the
	// full value stays in Header.
	ContentType string
}

// clone returns a deep copy, so a caller cannot change what was recorded.
func (r Request) clone() Request {
	r.Query = cloneValues(r.Query)
	r.Header = r.Header.Clone()
	r.Body = slices.Clone(r.Body)
	return r
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// Upstream is an httptest server that records every request and answers with the
// handler. It is safe for concurrent use.
type Upstream struct {
	*httptest.Server

	mu   sync.Mutex
	reqs []Request
}

// NewUpstream starts a fake upstream that records every request, then passes it to h.
// The handler sees the whole body (the recorder has read it and put it back). The
// server closes when the test ends.
func NewUpstream(t testing.TB, h http.HandlerFunc) *Upstream {
	t.Helper()
	if h == nil {
		t.Fatalf("providertest.NewUpstream: handler is nil")
	}
	u := &Upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("providertest upstream: read body of %s %s: %v", r.Method, r.URL.Path, err)
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		_ = r.Body.Close()
		u.record(Request{
			Method:      r.Method,
			Path:        r.URL.Path,
			Query:       r.URL.Query(),
			Header:      r.Header.Clone(),
			Body:        slices.Clone(body),
			ContentType: mediaType(r.Header.Get("Content-Type")),
		})
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *Upstream) record(r Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reqs = append(u.reqs, r)
}

// Requests returns copies of the requests received so far, in the order they arrived.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]Request, len(u.reqs))
	for i, r := range u.reqs {
		out[i] = r.clone()
	}
	return out
}

// Last returns a copy of the latest request; it fails the test if none arrived.
func (u *Upstream) Last(t testing.TB) Request {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.reqs) == 0 {
		t.Fatalf("providertest: the fake upstream received no request")
		return Request{}
	}
	return u.reqs[len(u.reqs)-1].clone()
}

// mediaType returns the media type of a Content-Type value without parameters, or
// the trimmed value itself when it does not parse.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}
