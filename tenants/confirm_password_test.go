package tenants_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestConfirmPassword: a signed-in user confirms their password before linking their
// identity provider account: the right one passes; a wrong one, or none set, is
// unauthorized; the guesses count in the account's sign-in throttle, so confirming
// does not give more guesses than signing in; another tenant's user is not found; a
// tenant with passwords off refuses.
func TestConfirmPassword(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	c := &testClock{now: time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)}
	s := tenants.NewStore(db)
	s.SetPasswordCost(bcrypt.MinCost)
	s.SetThrottles(limits.NewSignIns(limits.SignInOptions{FreeFailures: 3, FirstWait: time.Minute, MaxWait: time.Hour, Now: c.Now}), nil)
	f := newFixture(t, s, "alpha")
	other := newFixture(t, s, "beta")
	ctx := limits.WithSource(context.Background(), "203.0.113.9")
	if err := s.ConfirmPassword(ctx, f.tenant.ID, f.owner.ID, goodPassword); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("no password set: %v, want unauthorized", err)
	}
	if err := s.SetPassword(ctx, f.tenant.ID, f.owner.ID, goodPassword); err != nil {
		t.Fatal(err)
	}
	if err := s.ConfirmPassword(ctx, f.tenant.ID, f.owner.ID, goodPassword); err != nil {
		t.Errorf("the right password: %v", err)
	}
	if err := s.ConfirmPassword(ctx, other.tenant.ID, f.owner.ID, goodPassword); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("the user under another tenant: %v, want not found", err)
	}
	for i := range 2 {
		if err := s.ConfirmPassword(ctx, f.tenant.ID, f.owner.ID, "wrong password!"); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
			t.Fatalf("wrong password %d: %v, want unauthorized", i+1, err)
		}
	}
	if _, _, err := s.SignIn(ctx, "alpha", f.owner.Email, "wrong password!"); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Fatalf("third failure, by signing in: %v, want unauthorized", err)
	}
	if err := s.ConfirmPassword(ctx, f.tenant.ID, f.owner.ID, goodPassword); switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Errorf("the right password after three failures: %v, want rate_limited", err)
	}
	c.advance(time.Minute)
	s.SetPasswordPolicy(func(context.Context, switchboard.TenantID) (bool, error) { return false, nil })
	if err := s.ConfirmPassword(ctx, f.tenant.ID, f.owner.ID, goodPassword); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Errorf("passwords off: %v, want forbidden", err)
	}
}
