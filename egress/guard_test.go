package egress

import (
	"context"
	"testing"
)

// TestGuardAllows checks what the guard lets through: public addresses, and private
// ones an operator allowed, whether given with a zone or IPv4-mapped.
func TestGuardAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cidrs []string
		host  string
	}{
		{name: "public IPv4", host: "93.184.215.14"},
		{name: "public IPv6", host: "2606:4700:4700::1111"},
		{name: "public IPv6 near Teredo", host: "2001:4860:4860::8888"},
		{name: "public IPv4-mapped", host: "::ffff:93.184.215.14"},
		{name: "allowed loopback with zone", cidrs: []string{"::1/128"}, host: "::1%lo"},
		{name: "allowed link-local with zone", cidrs: []string{"fe80::/10"}, host: "fe80::1%eth0"},
		{name: "allowed by an IPv4-mapped range", cidrs: []string{"::ffff:127.0.0.0/104"}, host: "127.0.0.1"},
		{name: "allowed IPv4 range, mapped address", cidrs: []string{"10.0.0.0/8"}, host: "::ffff:10.1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := NewGuard(false, tt.cidrs)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.CheckHost(context.Background(), tt.host); err != nil {
				t.Fatalf("CheckHost(%s) = %v, want allowed", tt.host, err)
			}
		})
	}
}
