package tenants_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

// testClock is a clock that moves only when told.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countQueries counts the SELECTs db runs from now on.
func countQueries(t *testing.T, db *gorm.DB) *atomic.Int64 {
	t.Helper()
	n := &atomic.Int64{}
	if err := db.Callback().Query().Before("gorm:query").Register("test:count_queries", func(*gorm.DB) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Callback().Raw().Before("gorm:raw").Register("test:count_raw", func(*gorm.DB) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSignInThrottled sends 60 wrong passwords for one account: only the free
// failures run bcrypt, the rest are refused with rate_limited saying when to try
// again; after the wait one more check runs; the right password then signs in and
// clears the account; a password link clears a locked account at once.
func TestSignInThrottled(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		c := &testClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
		s := tenants.NewStore(db)
		s.SetPasswordCost(bcrypt.MinCost)
		s.SetThrottles(limits.NewSignIns(limits.SignInOptions{FreeFailures: 5, FirstWait: 30 * time.Second, MaxWait: 15 * time.Minute, Now: c.Now}), nil)
		f := newFixture(t, s, "alpha")
		ctx := limits.WithSource(context.Background(), "203.0.113.9")
		if err := s.SetPassword(ctx, f.tenant.ID, f.owner.ID, goodPassword); err != nil {
			t.Fatal(err)
		}
		checks := tenants.PasswordChecks(s)
		codes := map[switchboard.Code]int{}
		var limited *switchboard.Error
		for range 60 {
			_, _, err := s.SignIn(ctx, "alpha", f.owner.Email, "wrong password!")
			e := switchboard.AsError(err)
			codes[e.Code]++
			if e.Code == switchboard.CodeRateLimited && limited == nil {
				limited = e
			}
		}
		if diff := cmp.Diff(map[switchboard.Code]int{switchboard.CodeUnauthorized: 5, switchboard.CodeRateLimited: 55}, codes); diff != "" {
			t.Errorf("answers to 60 wrong passwords (-want +got):\n%s", diff)
		}
		if n := tenants.PasswordChecks(s) - checks; n != 5 {
			t.Errorf("60 wrong passwords ran %d password checks, want 5", n)
		}
		if limited == nil || limited.RetryAfter != 30*time.Second || !strings.Contains(limited.Message, "try again in 30 seconds") {
			t.Fatalf("refusal = %+v, want Retry-After 30 s and a message saying so", limited)
		}
		// Even the right password waits: nothing is checked while the account is locked.
		if _, _, err := s.SignIn(ctx, "alpha", f.owner.Email, goodPassword); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
			t.Fatalf("right password while locked: %v, want rate_limited", err)
		}
		c.advance(30 * time.Second)
		if _, _, err := s.SignIn(ctx, "alpha", f.owner.Email, goodPassword); err != nil {
			t.Fatalf("right password after the wait: %v", err)
		}
		// The good sign-in cleared the account: five more failures are free again.
		for i := range 5 {
			if _, _, err := s.SignIn(ctx, "alpha", f.owner.Email, "wrong password!"); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
				t.Fatalf("failure %d after a good sign-in: %v, want unauthorized", i+1, err)
			}
		}
		if _, _, err := s.SignIn(ctx, "alpha", f.owner.Email, goodPassword); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
			t.Fatalf("after five more failures: %v, want rate_limited", err)
		}
		// A password link gets the owner in and clears the lock.
		link, _, err := s.PasswordLink(ctx, f.tenant.ID, f.owner.ID, "user:"+f.owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.UseLink(ctx, link, goodPassword+"2"); err != nil {
			t.Fatalf("UseLink on a locked account: %v", err)
		}
		if _, _, err := s.SignIn(ctx, "alpha", f.owner.Email, goodPassword+"2"); err != nil {
			t.Fatalf("sign-in right after the password link: %v", err)
		}
	})
}

// TestSignInThrottledPerSource guesses across many accounts, known and unknown, from
// one address: bcrypt runs only for the address's burst; another address still signs
// in.
func TestSignInThrottledPerSource(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	c := &testClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	s := tenants.NewStore(db)
	s.SetPasswordCost(bcrypt.MinCost)
	s.SetThrottles(limits.NewSignIns(limits.SignInOptions{SourceBurst: 10, SourceEvery: 6 * time.Second, Now: c.Now}), nil)
	f := newFixture(t, s, "alpha")
	if err := s.SetPassword(context.Background(), f.tenant.ID, f.member.ID, goodPassword); err != nil {
		t.Fatal(err)
	}
	attacker := limits.WithSource(context.Background(), "2001:db8:1:2::/64")
	checks := tenants.PasswordChecks(s)
	limited := 0
	for i := range 40 {
		email := fmt.Sprintf("guess-%d@alpha.test", i)
		if i%4 == 0 {
			email = f.owner.Email
		}
		_, _, err := s.SignIn(attacker, "alpha", email, fmt.Sprintf("password %d", i))
		if e := switchboard.AsError(err); e.Code == switchboard.CodeRateLimited {
			limited++
			if !strings.Contains(e.Message, "from your network") || e.RetryAfter != 6*time.Second {
				t.Fatalf("refusal %+v, want the address's, after 6 s", e)
			}
		}
	}
	if n := tenants.PasswordChecks(s) - checks; n != 10 || limited != 30 {
		t.Errorf("40 guesses from one address ran %d password checks and %d were refused, want 10 and 30", n, limited)
	}
	if _, _, err := s.SignIn(limits.WithSource(context.Background(), "198.51.100.7"), "alpha", f.member.Email, goodPassword); err != nil {
		t.Errorf("sign-in from another address: %v", err)
	}
}

// TestUnknownKeysCostNoQuery sends unknown API keys: the same unknown key is looked up
// once, not each time; random keys from one address are answered unauthorized up to its
// burst, then refused with rate_limited; a revoked key is not looked up again either.
func TestUnknownKeysCostNoQuery(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		c := &testClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
		s := tenants.NewStore(db)
		s.SetThrottles(nil, limits.NewKeyMisses(limits.KeyMissOptions{TTL: time.Minute, SourceBurst: 20, SourceEvery: 2 * time.Second, Now: c.Now}))
		f := newFixture(t, s, "alpha")
		plain, key, err := s.CreateKey(context.Background(), f.tenant.ID, f.owner.ID, "ci", false)
		if err != nil {
			t.Fatal(err)
		}
		queries := countQueries(t, db)
		ctx := limits.WithSource(context.Background(), "203.0.113.9")
		// A made-up key of the right shape: its prefix and secret differ from plain's.
		unknown := func(i int) string {
			return plain[:4] + fmt.Sprintf("%012d", i) + plain[16:]
		}
		for range 50 {
			if _, err := s.Authenticate(ctx, unknown(0)); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
				t.Fatalf("unknown key: %v, want unauthorized", err)
			}
		}
		if n := queries.Load(); n != 1 {
			t.Errorf("the same unknown key 50 times cost %d queries, want 1", n)
		}
		queries.Store(0)
		codes := map[switchboard.Code]int{}
		for i := range 100 {
			_, err := s.Authenticate(ctx, unknown(i+1))
			codes[switchboard.CodeOf(err)]++
		}
		if diff := cmp.Diff(map[switchboard.Code]int{switchboard.CodeUnauthorized: 19, switchboard.CodeRateLimited: 81}, codes); diff != "" {
			t.Errorf("answers to 100 unknown keys (-want +got):\n%s", diff)
		}
		// A revoked key is looked up once after its revocation, then answered from memory
		// (from another address: this one has run out, so it would hear rate_limited).
		if _, err := s.RevokeKey(context.Background(), f.tenant.ID, key.ID); err != nil {
			t.Fatal(err)
		}
		queries.Store(0)
		other := limits.WithSource(context.Background(), "198.51.100.7")
		for range 10 {
			if _, err := s.Authenticate(other, plain); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
				t.Fatalf("revoked key: %v, want unauthorized", err)
			}
		}
		if n := queries.Load(); n != 1 {
			t.Errorf("a revoked key 10 times cost %d queries, want 1", n)
		}
	})
}

// TestValidKeyAfterUnknownKeys sends 40 unknown API keys from one address, more than
// its burst of 30: a valid key that is not cached is then accepted from that address
// all the same (behind a proxy every client may share it), while a 41st unknown key is
// still refused with rate_limited.
func TestValidKeyAfterUnknownKeys(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	c := &testClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	s := tenants.NewStore(db)
	s.SetThrottles(nil, limits.NewKeyMisses(limits.KeyMissOptions{Now: c.Now}))
	f := newFixture(t, s, "alpha")
	plain, _, err := s.CreateKey(context.Background(), f.tenant.ID, f.member.ID, "ci", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := limits.WithSource(context.Background(), "203.0.113.9")
	unknown := func(i int) string {
		return plain[:4] + fmt.Sprintf("%012d", i) + plain[16:]
	}
	codes := map[switchboard.Code]int{}
	for i := range 40 {
		_, err := s.Authenticate(ctx, unknown(i))
		codes[switchboard.CodeOf(err)]++
	}
	if diff := cmp.Diff(map[switchboard.Code]int{switchboard.CodeUnauthorized: 30, switchboard.CodeRateLimited: 10}, codes); diff != "" {
		t.Errorf("answers to 40 unknown keys (-want +got):\n%s", diff)
	}
	if p, err := s.Authenticate(ctx, plain); err != nil || p.UserID != f.member.ID {
		t.Fatalf("a valid key after 40 unknown ones: %+v, %v", p, err)
	}
	if _, err := s.Authenticate(ctx, unknown(40)); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("a 41st unknown key: %v, want rate_limited", err)
	}
}
