package identity

import (
	"context"
	"testing"
)

// BenchmarkAuthenticateToken measures the hot path of an MCP request carrying an
// access token: the ES256 signature check and the cached grant check.
func BenchmarkAuthenticateToken(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	resource := ResourceURL(r.base, "acme", "")
	_, resp := r.tokens(r.signIn(r.acme, r.ada), resource)
	at := resp["access_token"].(string)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.srv.AuthenticateToken(ctx, at, resource); err != nil {
			b.Fatal(err)
		}
	}
}
