package egress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTrustedHostsPassTheGuard: a transport with a guard refuses a loopback host before
// anything is sent, unless the host is one of its trusted "host:port" pairs; another
// port of the same host stays refused.
func TestTrustedHostsPassTheGuard(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer other.Close()
	g, err := NewGuard(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	hostport := strings.TrimPrefix(srv.URL, "http://")
	get := func(rt http.RoundTripper, url string) error {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	var re *RefusedError
	if err := get(NewTransport(Options{Guard: g}), srv.URL); !errors.As(err, &re) {
		t.Fatalf("loopback without trust: %v, want refused", err)
	}
	trusting := NewTransport(Options{Guard: g, Trusted: []string{hostport}})
	if err := get(trusting, srv.URL); err != nil {
		t.Fatalf("trusted host: %v", err)
	}
	if err := get(trusting, other.URL); !errors.As(err, &re) {
		t.Fatalf("another port of the trusted host: %v, want refused", err)
	}
	if hits != 1 {
		t.Fatalf("the servers got %d requests, want 1 (the trusted one)", hits)
	}
}
