package tenants_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestOnKeysRevoked: revoking a key and removing a user tell the hooks which keys
// ended, once; revoking a revoked key tells nothing.
func TestOnKeysRevoked(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		s := tenants.NewStore(db)
		t.Cleanup(s.Close)
		var (
			mu   sync.Mutex
			told []string
		)
		s.OnKeysRevoked(func(tenant switchboard.TenantID, ids []string) {
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				told = append(told, string(tenant)+"/"+id)
			}
		})
		ten, err := s.CreateTenant(ctx, "hooks", "Hooks")
		if err != nil {
			t.Fatal(err)
		}
		owner, err := s.CreateUser(ctx, ten.ID, "owner@hooks.test", switchboard.RoleOwner)
		if err != nil {
			t.Fatal(err)
		}
		member, err := s.CreateUser(ctx, ten.ID, "member@hooks.test", switchboard.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		_, ownerKey, err := s.CreateKey(ctx, ten.ID, owner.ID, "k", false)
		if err != nil {
			t.Fatal(err)
		}
		_, m1, err := s.CreateKey(ctx, ten.ID, member.ID, "m1", false)
		if err != nil {
			t.Fatal(err)
		}
		_, m2, err := s.CreateKey(ctx, ten.ID, member.ID, "m2", false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RevokeKey(ctx, ten.ID, ownerKey.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RevokeKey(ctx, ten.ID, ownerKey.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RevokeKey(ctx, ten.ID, m1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RemoveUser(ctx, ten.ID, member.ID, false); err != nil {
			t.Fatal(err)
		}
		want := []string{string(ten.ID) + "/" + ownerKey.ID, string(ten.ID) + "/" + m1.ID, string(ten.ID) + "/" + m2.ID}
		mu.Lock()
		got := slices.Clone(told)
		mu.Unlock()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("keys told (-want +got):\n%s", diff)
		}
	})
}
