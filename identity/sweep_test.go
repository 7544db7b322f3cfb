package identity

import (
	"context"
	"testing"
	"time"
)

// TestSweep checks that expired codes (a day on) and expired refresh tokens are
// deleted, and live ones and grants kept.
func TestSweep(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	_, _ = r.tokens(r.signIn(r.acme, r.ada), ResourceURL(r.base, "acme", ""))
	count := func(table string) int64 {
		var n int64
		r.db.Table(table).Count(&n)
		return n
	}
	if n, err := r.srv.Sweep(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("sweep of live rows: %d, %v", n, err)
	}
	// Two days on, the code (used, expired) goes; the refresh token lives 30 days.
	if n, err := r.srv.Sweep(ctx, time.Now().Add(48*time.Hour)); err != nil || n != 1 || count("oauth_codes") != 0 || count("oauth_refresh_tokens") != 1 {
		t.Fatalf("sweep two days on: %d, %v; codes %d, refresh tokens %d", n, err, count("oauth_codes"), count("oauth_refresh_tokens"))
	}
	if n, err := r.srv.Sweep(ctx, time.Now().Add(RefreshTokenLifetime+time.Hour)); err != nil || n != 1 || count("oauth_refresh_tokens") != 0 || count("oauth_grants") != 1 {
		t.Fatalf("sweep past the refresh lifetime: %d, %v", n, err)
	}
}
