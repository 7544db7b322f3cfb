package egress

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSameOrigin checks the origin rule credentials follow: scheme, host and port,
// the default port when none is written, host names compared without case.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/other?x=1", true},
		{"https://mcp.example.com/mcp", "https://MCP.example.com:443/mcp", true},
		{"http://mcp.example.com/mcp", "http://mcp.example.com:80/mcp", true},
		{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp", false},
		{"https://mcp.example.com/mcp", "https://evil.mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp", "https://example.com/mcp", false},
		{"http://127.0.0.1:3000/mcp", "http://127.0.0.1:3001/mcp", false},
	}
	for _, tt := range tests {
		t.Run(tt.a+" "+tt.b, func(t *testing.T) {
			t.Parallel()
			a, _ := url.Parse(tt.a)
			b, _ := url.Parse(tt.b)
			if got := SameOrigin(a, b); got != tt.want {
				t.Errorf("SameOrigin = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestClientRedirectPolicy: a hop to the same origin keeps the request's headers only
// where the policy lets credentials follow (else the redirect is the answer); a hop to
// another origin keeps only the safe headers; a request with a body never follows one
// to another origin; only http and https are followed.
func TestClientRedirectPolicy(t *testing.T) {
	t.Parallel()
	type hit struct {
		path   string
		header http.Header
	}
	var mu sync.Mutex
	var otherHits []hit
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherHits = append(otherHits, hit{r.URL.Path, r.Header.Clone()})
		mu.Unlock()
	}))
	defer other.Close()
	var homeHits []hit
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		homeHits = append(homeHits, hit{r.URL.Path, r.Header.Clone()})
		mu.Unlock()
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/landed", http.StatusTemporaryRedirect)
		case "/other":
			http.Redirect(w, r, other.URL+"/landed", http.StatusTemporaryRedirect)
		case "/scheme":
			w.Header().Set("Location", "file:///etc/passwd")
			w.WriteHeader(http.StatusFound)
		}
	}))
	defer home.Close()
	send := func(sameOrigin bool, method, path string) (*http.Response, error) {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("client_secret=s3cret")
		}
		req, _ := http.NewRequest(method, home.URL+path, body)
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("X-Api-Key", "s3cret")
		req.Header.Set("Accept", "application/json")
		resp, err := Client(http.DefaultTransport, 5*time.Second, sameOrigin).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	reset := func() {
		mu.Lock()
		homeHits, otherHits = nil, nil
		mu.Unlock()
	}

	resp, err := send(true, http.MethodGet, "/same")
	if err != nil || resp.StatusCode != http.StatusOK || len(homeHits) != 2 || homeHits[1].header.Get("X-Api-Key") != "s3cret" {
		t.Fatalf("same origin, credentials may follow: %v, %d hits; want it followed with the headers", err, len(homeHits))
	}
	reset()
	resp, err = send(false, http.MethodGet, "/same")
	if err != nil || resp.StatusCode != http.StatusTemporaryRedirect || len(homeHits) != 1 {
		t.Fatalf("same origin, credentials may not follow: %v, %d hits; want the redirect as the answer", err, len(homeHits))
	}
	reset()
	if _, err = send(true, http.MethodGet, "/other"); err != nil || len(otherHits) != 1 {
		t.Fatalf("GET to another origin: %v, %d hits; want it followed", err, len(otherHits))
	}
	if h := otherHits[0].header; h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" || h.Get("Accept") != "application/json" {
		t.Errorf("another origin got headers %v, want only the safe ones", h)
	}
	reset()
	if _, err = send(true, http.MethodPost, "/other"); !errors.Is(err, ErrCrossOriginRedirect) || len(otherHits) != 0 {
		t.Errorf("POST to another origin: %v, %d hits; want ErrCrossOriginRedirect and nothing sent", err, len(otherHits))
	}
	if _, err = send(true, http.MethodGet, "/scheme"); err == nil || !strings.Contains(err.Error(), "file:") {
		t.Errorf("a redirect to file: = %v, want refused", err)
	}
}

// TestMayCarryCredentials: the first request of a chain, and a hop back at its origin,
// may carry the origin's credentials; a hop elsewhere may not.
func TestMayCarryCredentials(t *testing.T) {
	t.Parallel()
	first, _ := http.NewRequest(http.MethodGet, "https://api.example.com/a", nil)
	hop := func(prev *http.Request, to string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, to, nil)
		r.Response = &http.Response{Request: prev}
		return r
	}
	away := hop(first, "https://api.example.com:8443/b")
	back := hop(away, "https://api.example.com/c")
	for _, tt := range []struct {
		name string
		req  *http.Request
		want bool
	}{
		{"first", first, true},
		{"another port", away, false},
		{"back at the origin", back, true},
		{"a subdomain", hop(first, "https://evil.api.example.com/"), false},
	} {
		if got := MayCarryCredentials(tt.req); got != tt.want {
			t.Errorf("%s: MayCarryCredentials = %v, want %v", tt.name, got, tt.want)
		}
	}
}
