package tenants_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestExpiredKeysAreRefused: a key whose expiry has passed is refused like a revoked
// one, a key before its expiry works, and an expiry in the past is refused at creation.
func TestExpiredKeysAreRefused(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		s := tenants.NewStore(db)
		t.Cleanup(s.Close)
		f := newFixture(t, s, "exp")
		past := time.Now().Add(-time.Minute)
		_, _, err := s.CreateExpiringKey(ctx, f.tenant.ID, f.member.ID, "late", false, &past)
		wantCode(t, err, switchboard.CodeInvalid, "expires_at")

		soon := time.Now().Add(time.Hour)
		live, key, err := s.CreateExpiringKey(ctx, f.tenant.ID, f.member.ID, "live", false, &soon)
		if err != nil {
			t.Fatal(err)
		}
		if key.ExpiresAt == nil || key.ExpiresAt.Sub(soon).Abs() > time.Millisecond || key.Expired(time.Now()) {
			t.Errorf("the new key expires at %v, want %v and not yet expired", key.ExpiresAt, soon)
		}
		if _, err := s.Authenticate(ctx, live); err != nil {
			t.Errorf("a key before its expiry was refused: %v", err)
		}
		gone, old, err := s.CreateExpiringKey(ctx, f.tenant.ID, f.member.ID, "gone", false, &soon)
		if err != nil {
			t.Fatal(err)
		}
		// Its expiry passes (set in the database: no test waits for a clock).
		if err := db.Model(&tenants.APIKey{}).Where("id = ?", old.ID).Update("expires_at", past.UTC()).Error; err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, gone)
		wantCode(t, err, switchboard.CodeUnauthorized, "")
		keys, err := s.ListKeys(ctx, f.tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.ID == old.ID && !k.Expired(time.Now()) {
				t.Errorf("the listed key %s does not say it expired (%v)", k.ID, k.ExpiresAt)
			}
		}
	})
}

// TestKeyCacheStopsAtExpiry: a verified key is cached for the cache's lifetime, but
// never past its expiry, so an expiring key stops working on time on a node that
// cached it.
func TestKeyCacheStopsAtExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	got := tenants.CachedUntil(30*time.Second, now, now.Add(10*time.Second), now.Add(5*time.Second), now.Add(11*time.Second))
	if !got[0] || got[1] {
		t.Errorf("a key expiring in 10 s, cached for 30 s: found at +5 s %v, at +11 s %v; want true, false", got[0], got[1])
	}
	got = tenants.CachedUntil(30*time.Second, now, time.Time{}, now.Add(29*time.Second), now.Add(31*time.Second))
	if !got[0] || got[1] {
		t.Errorf("a key without expiry: found at +29 s %v, at +31 s %v; want true, false", got[0], got[1])
	}
}
