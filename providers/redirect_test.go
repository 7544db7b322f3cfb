package providers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard/egress"
)

// seenRequest is what a test upstream received: where, and every header that could
// carry a credential.
type seenRequest struct {
	method, path, query string
	header              http.Header
}

// recorder is a test upstream that keeps what it received and answers with answer.
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
	srv  *httptest.Server
}

func newRecorder(t *testing.T, answer http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, seenRequest{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone()})
		r.mu.Unlock()
		answer(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seenRequest(nil), r.seen...)
}

// TestCredentialsStayAtTheirOrigin: a provider's upstream that redirects to another
// origin (here another port of the same loopback host, which Go's own client counts
// as the same domain) gets the credential; the other origin gets none of it, in a
// header of any name or in the query, whichever way the provider puts it on requests.
// A redirect to the same origin carries it only when the provider says so; a request
// with a body never follows a redirect to another origin.
func TestCredentialsStayAtTheirOrigin(t *testing.T) {
	t.Parallel()
	const secret = "ghp_s3cr3t"
	ways := []struct {
		name string
		spec Spec
	}{
		{name: "bearer", spec: Spec{Name: "bearer"}},
		{name: "api key header", spec: Spec{Name: "keyed", AuthHeader: func(tok string) (string, string) { return "X-Api-Key", tok }}},
		{name: "api key in the query", spec: Spec{Name: "query", Authorize: func(r *http.Request, tok string) {
			q := r.URL.Query()
			q.Set("api_key", tok)
			r.URL.RawQuery = q.Encode()
		}}},
	}
	carries := func(s seenRequest) bool {
		if strings.Contains(s.query, secret) {
			return true
		}
		for _, vs := range s.header {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					return true
				}
			}
		}
		return false
	}
	for _, way := range ways {
		t.Run(way.name+": another origin", func(t *testing.T) {
			t.Parallel()
			other := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"ok":true}`)) })
			home := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.srv.URL+"/landing", http.StatusFound)
			})
			spec := way.spec
			c := NewClient(&spec, NewTransport(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: secret}), nil)
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, home.srv.URL+"/repos/o/r", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if h := home.requests(); len(h) != 1 || !carries(h[0]) {
				t.Fatalf("the provider's own origin got %+v, want one request with the credential", h)
			}
			o := other.requests()
			if len(o) != 1 {
				t.Fatalf("the other origin got %d requests, want the redirect followed once", len(o))
			}
			if carries(o[0]) {
				t.Errorf("the other origin got the credential: %+v", o[0])
			}
		})
		t.Run(way.name+": the same origin", func(t *testing.T) {
			t.Parallel()
			for _, follow := range []bool{false, true} {
				var home *recorder
				home = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/repos/old/name" {
						http.Redirect(w, r, "/repositories/42", http.StatusMovedPermanently)
						return
					}
					_, _ = w.Write([]byte(`{"id":42}`))
				})
				spec := way.spec
				spec.SameOriginRedirects = follow
				c := NewClient(&spec, NewTransport(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: secret}), nil)
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, home.srv.URL+"/repos/old/name", nil)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := home.requests()
				switch {
				case follow && (len(got) != 2 || got[1].path != "/repositories/42" || !carries(got[1])):
					t.Errorf("SameOriginRedirects: the upstream got %+v, want the redirect followed with the credential", got)
				case !follow && (len(got) != 1 || resp.StatusCode != http.StatusMovedPermanently):
					t.Errorf("without SameOriginRedirects: %d requests, answer %d; want the redirect itself as the answer", len(got), resp.StatusCode)
				}
			}
		})
	}
	t.Run("a body never follows to another origin", func(t *testing.T) {
		t.Parallel()
		other := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {})
		home := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.srv.URL+"/steal", http.StatusTemporaryRedirect)
		})
		c := NewClient(&Spec{Name: "bearer", SameOriginRedirects: true}, NewTransport(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: secret}), nil)
		_, err := post(context.Background(), c, home.srv.URL+"/gists", `{"files":{}}`)
		if !errors.Is(err, egress.ErrCrossOriginRedirect) {
			t.Fatalf("POST redirected by 307 to another origin: err = %v, want ErrCrossOriginRedirect", err)
		}
		if o := other.requests(); len(o) != 0 {
			t.Fatalf("the other origin got %+v, want nothing", o)
		}
	})
}
