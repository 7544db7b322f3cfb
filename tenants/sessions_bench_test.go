package tenants_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// BenchmarkAuthenticateSession measures what every UI request to /api costs to find
// who is asking: one indexed lookup of the session joined with its user and tenant
// (SQLite).
func BenchmarkAuthenticateSession(b *testing.B) {
	db := testdb.SQLite(b)
	s := tenants.NewStore(db)
	s.SetPasswordCost(bcrypt.MinCost)
	ctx := context.Background()
	ten, err := s.CreateTenant(ctx, "bench", "Bench")
	if err != nil {
		b.Fatal(err)
	}
	u, err := s.CreateUser(ctx, ten.ID, "bench@bench.test", "owner")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.SetPassword(ctx, ten.ID, u.ID, "a bench password"); err != nil {
		b.Fatal(err)
	}
	token, _, err := s.SignIn(ctx, "bench", "bench@bench.test", "a bench password")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AuthenticateSession(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignIn measures a sign-in at the production bcrypt cost: the hash check is
// the point of it, and what bounds password guessing per CPU.
func BenchmarkSignIn(b *testing.B) {
	db := testdb.SQLite(b)
	s := tenants.NewStore(db)
	ctx := context.Background()
	ten, err := s.CreateTenant(ctx, "bench", "Bench")
	if err != nil {
		b.Fatal(err)
	}
	u, err := s.CreateUser(ctx, ten.ID, "bench@bench.test", "owner")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.SetPassword(ctx, ten.ID, u.ID, "a bench password"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := s.SignIn(ctx, "bench", "bench@bench.test", "a bench password"); err != nil {
			b.Fatal(err)
		}
	}
}
