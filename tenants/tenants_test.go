package tenants_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/tenants"
)

// fixture is one tenant with an owner and a member.
type fixture struct {
	tenant tenants.Tenant
	owner  tenants.User
	member tenants.User
}

func newFixture(t *testing.T, s *tenants.Store, slug string) fixture {
	t.Helper()
	ctx := context.Background()
	ten, err := s.CreateTenant(ctx, slug, strings.ToUpper(slug))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.CreateUser(ctx, ten.ID, "owner@"+slug+".test", switchboard.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	member, err := s.CreateUser(ctx, ten.ID, "member@"+slug+".test", switchboard.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{tenant: ten, owner: owner, member: member}
}

func wantCode(t *testing.T, err error, code switchboard.Code, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s", code)
	}
	e := switchboard.AsError(err)
	if e.Code != code || e.Field != field {
		t.Fatalf("err = %v (code %s field %q), want code %s field %q", err, e.Code, e.Field, code, field)
	}
}

func TestCreateTenantAndUserValidation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := tenants.NewStore(db)
		ctx := context.Background()
		if _, err := s.CreateTenant(ctx, "acme", "Acme"); err != nil {
			t.Fatal(err)
		}
		tenantTests := []struct {
			name, slug, tname string
			code              switchboard.Code
			field             string
		}{
			{name: "ok", slug: "acme-2", tname: "Acme 2"},
			{name: "taken", slug: "acme", tname: "Other", code: switchboard.CodeConflict, field: "slug"},
			{name: "too short", slug: "ab", tname: "x", code: switchboard.CodeInvalid, field: "slug"},
			{name: "upper case", slug: "Acme", tname: "x", code: switchboard.CodeInvalid, field: "slug"},
			{name: "trailing dash", slug: "acme-", tname: "x", code: switchboard.CodeInvalid, field: "slug"},
			{name: "too long", slug: strings.Repeat("a", 41), tname: "x", code: switchboard.CodeInvalid, field: "slug"},
			{name: "blank name", slug: "blank", tname: "  ", code: switchboard.CodeInvalid, field: "name"},
		}
		for _, tt := range tenantTests {
			t.Run("tenant "+tt.name, func(t *testing.T) {
				got, err := s.CreateTenant(ctx, tt.slug, tt.tname)
				if tt.code != "" {
					wantCode(t, err, tt.code, tt.field)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				back, err := s.TenantBySlug(ctx, tt.slug)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, back); diff != "" {
					t.Errorf("read back (-created +read):\n%s", diff)
				}
			})
		}
		acme, err := s.TenantBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		userTests := []struct {
			name, email string
			role        switchboard.Role
			wantEmail   string
			code        switchboard.Code
			field       string
		}{
			{name: "ok, lower-cased", email: "Ada@Example.com", role: switchboard.RoleAdmin, wantEmail: "ada@example.com"},
			{name: "duplicate email", email: "ada@example.com", role: switchboard.RoleMember, code: switchboard.CodeConflict, field: "email"},
			{name: "display name", email: "Ada <bob@example.com>", role: switchboard.RoleMember, code: switchboard.CodeInvalid, field: "email"},
			{name: "no at", email: "ada.example.com", role: switchboard.RoleMember, code: switchboard.CodeInvalid, field: "email"},
			{name: "unknown role", email: "eve@example.com", role: "root", code: switchboard.CodeInvalid, field: "role"},
		}
		for _, tt := range userTests {
			t.Run("user "+tt.name, func(t *testing.T) {
				u, err := s.CreateUser(ctx, acme.ID, tt.email, tt.role)
				if tt.code != "" {
					wantCode(t, err, tt.code, tt.field)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if u.Email != tt.wantEmail {
					t.Errorf("email = %q, want %q", u.Email, tt.wantEmail)
				}
			})
		}
	})
}

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := tenants.NewStore(db)
		ctx := context.Background()
		a := newFixture(t, s, "tenant-a")
		b := newFixture(t, s, "tenant-b")
		_, keyA, err := s.CreateKey(ctx, a.tenant.ID, a.owner.ID, "ci", false)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			run  func() error
		}{
			{name: "read A's user as B", run: func() error { _, err := s.User(ctx, b.tenant.ID, a.owner.ID); return err }},
			{name: "revoke A's key as B", run: func() error { _, err := s.RevokeKey(ctx, b.tenant.ID, keyA.ID); return err }},
			{name: "read A's key as B", run: func() error { _, err := s.Key(ctx, b.tenant.ID, keyA.ID); return err }},
			{name: "create a key in B for A's user", run: func() error { _, _, err := s.CreateKey(ctx, b.tenant.ID, a.owner.ID, "x", false); return err }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantCode(t, tt.run(), switchboard.CodeNotFound, "")
			})
		}
		t.Run("lists are tenant-scoped", func(t *testing.T) {
			users, err := s.ListUsers(ctx, b.tenant.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]tenants.User{b.owner, b.member}, users); diff != "" {
				t.Errorf("B's users (-want +got):\n%s", diff)
			}
			keys, err := s.ListKeys(ctx, b.tenant.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 0 {
				t.Errorf("B lists %d keys, want 0", len(keys))
			}
		})
		t.Run("A's key still works", func(t *testing.T) {
			k, err := s.Key(ctx, a.tenant.ID, keyA.ID)
			if err != nil {
				t.Fatal(err)
			}
			if k.RevokedAt != nil {
				t.Error("B's revoke attempt revoked A's key")
			}
		})
	})
}

func TestKeys(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := tenants.NewStore(db)
		t.Cleanup(s.Close)
		ctx := context.Background()
		a := newFixture(t, s, "keys-a")
		plain, key, err := s.CreateKey(ctx, a.tenant.ID, a.member.ID, "laptop", false)
		if err != nil {
			t.Fatal(err)
		}
		opPlain, opKey, err := s.CreateKey(ctx, a.tenant.ID, a.owner.ID, "ops", true)
		if err != nil {
			t.Fatal(err)
		}
		agentPlain, agentKey, err := s.CreateAgentKey(ctx, a.tenant.ID, a.member.ID, "agt_1", "triage bot", a.member.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(plain, "sbk_"+key.Prefix+"_") || len(key.Prefix) != 12 {
			t.Fatalf("key %q does not start with sbk_ and its 12-character prefix %q", plain, key.Prefix)
		}
		var stored string
		if err := db.Table("api_keys").Where("id = ?", key.ID).Pluck("hash", &stored).Error; err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, plain[len("sbk_")+13:]) || len(stored) != 64 {
			t.Fatalf("stored hash %q is not a SHA-256 hex of the key", stored)
		}
		secret := plain[len(plain)-52:]
		wrongSecret := plain[:len(plain)-52] + strings.Repeat("a", 52)
		if wrongSecret == plain {
			t.Fatal("test key collides with the wrong secret")
		}
		tests := []struct {
			name string
			key  string
			want switchboard.Principal
			code switchboard.Code
		}{
			{name: "member key", key: plain, want: switchboard.Principal{TenantID: a.tenant.ID, TenantSlug: "keys-a", Kind: switchboard.PrincipalUser, UserID: a.member.ID, Role: switchboard.RoleMember, KeyID: key.ID}},
			{name: "member key again, from the cache", key: plain, want: switchboard.Principal{TenantID: a.tenant.ID, TenantSlug: "keys-a", Kind: switchboard.PrincipalUser, UserID: a.member.ID, Role: switchboard.RoleMember, KeyID: key.ID}},
			{name: "operator key", key: opPlain, want: switchboard.Principal{TenantID: a.tenant.ID, TenantSlug: "keys-a", Kind: switchboard.PrincipalUser, UserID: a.owner.ID, Role: switchboard.RoleOwner, KeyID: opKey.ID, Operator: true}},
			{name: "agent key", key: agentPlain, want: switchboard.Principal{TenantID: a.tenant.ID, TenantSlug: "keys-a", Kind: switchboard.PrincipalAgent, UserID: a.member.ID, AgentID: "agt_1", Role: switchboard.RoleMember, KeyID: agentKey.ID}},
			{name: "valid prefix, wrong secret", key: wrongSecret, code: switchboard.CodeUnauthorized},
			{name: "unknown prefix", key: "sbk_000000000000_" + secret, code: switchboard.CodeUnauthorized},
			{name: "malformed", key: "Bearer " + plain, code: switchboard.CodeUnauthorized},
			{name: "empty", key: "", code: switchboard.CodeUnauthorized},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.Authenticate(ctx, tt.key)
				if tt.code != "" {
					wantCode(t, err, tt.code, "")
					if !strings.Contains(err.Error(), "invalid or revoked API key") {
						t.Errorf("err = %v, want the one message for every bad key", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("principal (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("last_used_at recorded off the request path", func(t *testing.T) {
			s.Close() // waits for the background update
			k, err := s.Key(ctx, a.tenant.ID, key.ID)
			if err != nil {
				t.Fatal(err)
			}
			if k.LastUsedAt == nil || time.Since(*k.LastUsedAt) > time.Minute {
				t.Errorf("last_used_at = %v, want about now", k.LastUsedAt)
			}
		})
		t.Run("revoked key refused at once", func(t *testing.T) {
			if _, err := s.Authenticate(ctx, plain); err != nil { // warm the cache
				t.Fatal(err)
			}
			if revoked, err := s.RevokeKey(ctx, a.tenant.ID, key.ID); err != nil || !revoked {
				t.Fatalf("RevokeKey() = %v, %v; want true, nil", revoked, err)
			}
			_, err := s.Authenticate(ctx, plain)
			wantCode(t, err, switchboard.CodeUnauthorized, "")
			if revoked, err := s.RevokeKey(ctx, a.tenant.ID, key.ID); err != nil || revoked {
				t.Errorf("revoking again: RevokeKey() = %v, %v; want false, nil", revoked, err)
			}
			keys, err := s.ListKeys(ctx, a.tenant.ID)
			if err != nil {
				t.Fatal(err)
			}
			var revoked []string
			for _, k := range keys {
				if k.Revoked() {
					revoked = append(revoked, k.ID)
				}
			}
			if diff := cmp.Diff([]string{key.ID}, revoked); diff != "" {
				t.Errorf("revoked keys (-want +got):\n%s", diff)
			}
		})
		t.Run("revoked in another process: refused once the cache expires", func(t *testing.T) {
			other := tenants.NewStore(db) // a second process's store, with its own cache
			if _, err := other.Authenticate(ctx, opPlain); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RevokeKey(ctx, a.tenant.ID, opKey.ID); err != nil {
				t.Fatal(err)
			}
			fresh := tenants.NewStore(db)
			_, err := fresh.Authenticate(ctx, opPlain)
			wantCode(t, err, switchboard.CodeUnauthorized, "")
		})
	})
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := tenants.NewStore(db)
		t.Cleanup(s.Close)
		ctx := context.Background()
		type result struct {
			tenant  tenants.Tenant
			key     string
			created bool
			err     error
		}
		results := make([]result, 3)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				r := &results[i]
				r.tenant, r.key, r.created, r.err = s.Bootstrap(ctx)
			})
		}
		testwait.Wait(t, "the concurrent calls to return", wg.Wait)
		var created []result
		for _, r := range results {
			if r.err != nil {
				t.Fatalf("bootstrap: %v", r.err)
			}
			if r.created {
				created = append(created, r)
			} else if r.key != "" {
				t.Error("bootstrap returned a key without creating one")
			}
		}
		if len(created) != 1 {
			t.Fatalf("%d bootstraps created, want 1", len(created))
		}
		first := created[0]
		again, key, made, err := s.Bootstrap(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if made || key != "" {
			t.Errorf("second bootstrap: created=%v key set=%v, want neither", made, key != "")
		}
		if diff := cmp.Diff(first.tenant, again); diff != "" {
			t.Errorf("tenant (-first +again):\n%s", diff)
		}
		p, err := s.Authenticate(ctx, first.key)
		if err != nil {
			t.Fatal(err)
		}
		want := switchboard.Principal{TenantID: first.tenant.ID, TenantSlug: "default", Kind: switchboard.PrincipalUser, Role: switchboard.RoleOwner, Operator: true}
		if diff := cmp.Diff(want, p, cmpopts.IgnoreFields(switchboard.Principal{}, "UserID", "KeyID")); diff != "" {
			t.Errorf("bootstrap principal (-want +got):\n%s", diff)
		}
		u, err := s.User(ctx, first.tenant.ID, p.UserID)
		if err != nil {
			t.Fatal(err)
		}
		if u.Email != "admin@localhost" {
			t.Errorf("bootstrap user = %q, want admin@localhost", u.Email)
		}
		ts, err := s.ListTenants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 1 {
			t.Errorf("%d tenants, want 1", len(ts))
		}
	})
}

// BenchmarkAuthenticate measures the hot path: a key verified once, then served from
// the cache.
func BenchmarkAuthenticate(b *testing.B) {
	db := testdb.SQLite(b)
	s := tenants.NewStore(db)
	defer s.Close()
	ctx := context.Background()
	ten, err := s.CreateTenant(ctx, "bench", "Bench")
	if err != nil {
		b.Fatal(err)
	}
	u, err := s.CreateUser(ctx, ten.ID, "b@bench.test", switchboard.RoleMember)
	if err != nil {
		b.Fatal(err)
	}
	key, _, err := s.CreateKey(ctx, ten.ID, u.ID, "bench", false)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Authenticate(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
	})
}
