package egress

import (
	"net/url"
	"testing"
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
