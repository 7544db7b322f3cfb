package limits_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-hub/switchboard/limits"
)

// TestSources finds the client address of requests: the peer's unless the peer is a
// trusted proxy, whose X-Forwarded-For is read from the right, skipping trusted hops;
// whatever an untrusted client writes there is ignored; IPv6 clients are keyed by
// their /64.
func TestSources(t *testing.T) {
	t.Parallel()
	s, err := limits.NewSources([]string{"10.0.0.0/8", "fd00::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{name: "direct IPv4", remote: "203.0.113.9:51234", want: "203.0.113.9"},
		{name: "direct IPv6 by /64", remote: "[2001:db8:1:2:3:4:5:6]:443", want: "2001:db8:1:2::/64"},
		{name: "IPv4-mapped", remote: "[::ffff:203.0.113.9]:443", want: "203.0.113.9"},
		{name: "untrusted peer's header ignored", remote: "203.0.113.9:1", xff: []string{"198.51.100.7"}, want: "203.0.113.9"},
		{name: "trusted proxy", remote: "10.1.2.3:1", xff: []string{"198.51.100.7"}, want: "198.51.100.7"},
		{name: "client's own entries skipped", remote: "10.1.2.3:1", xff: []string{"1.2.3.4, 198.51.100.7"}, want: "198.51.100.7"},
		{name: "chain of trusted proxies", remote: "10.1.2.3:1", xff: []string{"198.51.100.7, 10.9.9.9", "10.8.8.8"}, want: "198.51.100.7"},
		{name: "trusted IPv6 proxy", remote: "[fd00::1]:1", xff: []string{"2001:db8:5:6::9"}, want: "2001:db8:5:6::/64"},
		{name: "malformed hop stops the walk", remote: "10.1.2.3:1", xff: []string{"198.51.100.7, garbage, 10.9.9.9"}, want: "10.9.9.9"},
		{name: "only trusted hops", remote: "10.1.2.3:1", xff: []string{"10.9.9.9"}, want: "10.9.9.9"},
		{name: "proxy without header", remote: "10.1.2.3:1", want: "10.1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.Of(r); got != tt.want {
				t.Errorf("Of = %q, want %q", got, tt.want)
			}
			var inHandler string
			s.Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { inHandler = limits.SourceFrom(r.Context()) })).ServeHTTP(httptest.NewRecorder(), r)
			if inHandler != tt.want {
				t.Errorf("the handler's context holds %q, want %q", inHandler, tt.want)
			}
		})
	}
	if got := limits.SourceFrom(context.Background()); got != "" {
		t.Errorf("SourceFrom without one = %q, want empty", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "fe80::1%eth0/64"} {
		if _, err := limits.NewSources([]string{bad}); err == nil {
			t.Errorf("NewSources(%q) accepted it", bad)
		}
	}
}
