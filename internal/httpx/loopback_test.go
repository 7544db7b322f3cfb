package httpx

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST:8080", true},
		{"127.0.0.1", true},
		{"127.0.0.1:443", true},
		{"[::1]", true},
		{"[::1]:8080", true},
		{"::1", true},
		{"evil.example", false},
		{"evil.example:80", false},
		{"10.0.0.1:80", false},
		{"localhost.evil.example", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			if got := IsLoopbackHost(tt.host); got != tt.want {
				t.Errorf("IsLoopbackHost(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}

func TestOnLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		local net.Addr
		want  bool
	}{
		{"loopback v4 listener", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, true},
		{"loopback v6 listener", &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, true},
		{"public listener", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 443}, false},
		{"no local address", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, "http://localhost/", nil)
			if tt.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
			}
			if got := OnLoopback(r); got != tt.want {
				t.Errorf("OnLoopback(local %v) = %v, want %v", tt.local, got, tt.want)
			}
		})
	}
}
