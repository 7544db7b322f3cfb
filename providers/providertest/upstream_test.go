package providertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
)

func TestUpstreamRecords(t *testing.T) {
	t.Parallel()
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("handler: read body: %v", err)
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
	})
	tests := []struct {
		name     string
		method   string
		target   string
		ct, body string
		want     Request
	}{
		{
			name: "GET with a query", method: "GET", target: "/repos/o/r/issues?state=open&labels=a,b",
			want: Request{Method: "GET", Path: "/repos/o/r/issues", Query: url.Values{"state": {"open"}, "labels": {"a,b"}}},
		},
		{
			name: "form POST", method: "POST", target: "/chat.postMessage", ct: "application/x-www-form-urlencoded; charset=utf-8", body: "channel=C1&text=hi",
			want: Request{Method: "POST", Path: "/chat.postMessage", Query: url.Values{}, Body: []byte("channel=C1&text=hi"), ContentType: "application/x-www-form-urlencoded"},
		},
		{
			name: "escaped path", method: "GET", target: "/repos/o/r/contents/dir%2Ffile.txt",
			want: Request{Method: "GET", Path: "/repos/o/r/contents/dir/file.txt", Query: url.Values{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(context.Background(), tt.method, up.URL+tt.target, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.ct != "" {
				req.Header.Set("Content-Type", tt.ct)
			}
			req.Header.Set("X-Test", tt.name)
			resp, err := up.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			echo, _ := io.ReadAll(resp.Body)
			if want := tt.method + " " + tt.want.Path + " " + tt.body; string(echo) != want {
				t.Errorf("handler saw %q, want %q (the body must be re-readable)", echo, want)
			}
			var got *Request
			for _, r := range up.Requests() {
				if r.Header.Get("X-Test") == tt.name {
					got = &r
				}
			}
			if got == nil {
				t.Fatalf("request %q not recorded", tt.name)
			}
			if got.Header.Get("Content-Type") != tt.ct {
				t.Errorf("recorded Content-Type header %q, want %q", got.Header.Get("Content-Type"), tt.ct)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreFields(Request{}, "Header"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("recorded request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpstreamConcurrentAndCopies(t *testing.T) {
	t.Parallel()
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := up.Client().Post(fmt.Sprintf("%s/n/%d", up.URL, i), "text/plain", strings.NewReader("x"))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			resp.Body.Close()
			_ = up.Requests() // read while others write
		})
	}
	testwait.Wait(t, "the concurrent calls to return", wg.Wait)
	reqs := up.Requests()
	if len(reqs) != n {
		t.Fatalf("recorded %d requests, want %d", len(reqs), n)
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		seen[r.Path] = true
	}
	if len(seen) != n {
		t.Errorf("recorded %d distinct paths, want %d", len(seen), n)
	}
	// What a caller gets is a copy.
	reqs[0].Body[0] = 'y'
	reqs[0].Header.Set("X-Changed", "1")
	reqs[0].Query.Set("changed", "1")
	again := up.Requests()[0]
	if string(again.Body) != "x" || again.Header.Get("X-Changed") != "" || again.Query.Get("changed") != "" {
		t.Errorf("changing a returned request changed the record: %+v", again)
	}
	last := up.Last(t)
	last.Body[0] = 'z'
	if got := up.Last(t); string(got.Body) != "x" {
		t.Errorf("changing Last's request changed the record: body %q", got.Body)
	}
}

func TestUpstreamLastWithoutRequests(t *testing.T) {
	t.Parallel()
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	rec := record(t, func(tb testing.TB) { up.Last(tb) })
	if !rec.fatal {
		t.Errorf("Last with no request did not fail the test")
	}
	assertFailures(t, rec, []string{"no request"})
}

func TestNewCallUsesTheClientKit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answers := []int{http.StatusServiceUnavailable, http.StatusOK}
	up := NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		status := answers[0]
		if len(answers) > 1 {
			answers = answers[1:]
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"ok":true}`)
	})
	spec := &providers.Spec{
		Name:      "fake",
		Headers:   map[string]string{"Accept": "application/vnd.fake+json"},
		RateLimit: providers.RateLimit{PerSecond: 100, Burst: 10},
	}
	call := NewCall(t, spec, up.URL+"/", "tok-123")
	if call.BaseURL != up.URL || call.Tenant == "" || call.ConnectionID == "" {
		t.Errorf("call = %+v, want base URL %s without the trailing slash and a tenant and connection", call, up.URL)
	}
	op := &providers.Operation[struct{}, struct{}]{
		Name: "ping", Hints: providers.Hints{ReadOnly: true},
		Run: func(ctx context.Context, c *providers.Call, _ struct{}) (struct{}, error) {
			req, err := http.NewRequestWithContext(ctx, "GET", c.URL("/ping"), nil)
			if err != nil {
				return struct{}{}, err
			}
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return struct{}{}, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return struct{}{}, fmt.Errorf("status %d", resp.StatusCode)
			}
			return struct{}{}, nil
		},
	}
	if _, err := op.Invoke(context.Background(), call, nil); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream got %d requests, want 2 (a 503, retried)", len(reqs))
	}
	for _, r := range reqs {
		got := map[string]string{"Authorization": r.Header.Get("Authorization"), "Accept": r.Header.Get("Accept"), "Path": r.Path}
		want := map[string]string{"Authorization": "Bearer tok-123", "Accept": "application/vnd.fake+json", "Path": "/ping"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
	}
}

func TestNewCallRefusesBadArguments(t *testing.T) {
	t.Parallel()
	spec := &providers.Spec{Name: "fake"}
	tests := []struct {
		name          string
		spec          *providers.Spec
		base, token   string
		wantSubstring string
	}{
		{name: "nil spec", base: "http://x", token: "t", wantSubstring: "spec is nil"},
		{name: "no base URL", spec: spec, token: "t", wantSubstring: "baseURL is empty"},
		{name: "no token", spec: spec, base: "http://x", wantSubstring: "token is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := record(t, func(tb testing.TB) { NewCall(tb, tt.spec, tt.base, tt.token) })
			if !rec.fatal {
				t.Errorf("NewCall did not stop the test")
			}
			assertFailures(t, rec, []string{tt.wantSubstring})
		})
	}
}
