package tenants_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// failInserts makes every insert into the table named by *table fail while it is set,
// as a lost connection or a full disk would.
func failInserts(t *testing.T, db *gorm.DB, table *atomic.Value) {
	t.Helper()
	err := db.Callback().Create().Before("gorm:create").Register("test:fail_inserts", func(tx *gorm.DB) {
		if name, _ := table.Load().(string); name != "" && tx.Statement.Table == name {
			_ = tx.AddError(errors.New("forced failure inserting into " + name))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateTenantWithOwner(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		var failTable atomic.Value
		failInserts(t, db, &failTable)
		s := tenants.NewStore(db)
		t.Cleanup(s.Close)
		ctx := context.Background()

		// The subtests share the failure switch, so they run one after another.
		failures := []struct {
			name      string
			slug      string
			email     string
			failTable string
			code      switchboard.Code
			field     string
		}{
			{name: "bad owner email", slug: "bad-email", email: "Ada <ada@example.com>", code: switchboard.CodeInvalid, field: "owner_email"},
			{name: "owner user insert fails", slug: "user-fails", email: "ada@example.com", failTable: "users", code: switchboard.CodeInternal},
			{name: "owner key insert fails", slug: "key-fails", email: "ada@example.com", failTable: "api_keys", code: switchboard.CodeInternal},
		}
		for _, tt := range failures {
			t.Run(tt.name, func(t *testing.T) {
				failTable.Store(tt.failTable)
				_, _, plain, _, err := s.CreateTenantWithOwner(ctx, tt.slug, "Failing", tt.email)
				failTable.Store("")
				wantCode(t, err, tt.code, tt.field)
				if plain != "" {
					t.Error("a failed creation returned a key")
				}
				if _, err := s.TenantBySlug(ctx, tt.slug); switchboard.CodeOf(err) != switchboard.CodeNotFound {
					t.Errorf("tenant %s after the failure: err = %v, want not found", tt.slug, err)
				}
				for _, table := range []string{"tenants", "users", "api_keys"} {
					var n int64
					if err := db.Table(table).Count(&n).Error; err != nil {
						t.Fatal(err)
					}
					if n != 0 {
						t.Errorf("%d rows left in %s", n, table)
					}
				}
				// The slug is still free.
				ten, owner, _, _, err := s.CreateTenantWithOwner(ctx, tt.slug, "Retried", "ada@example.com")
				if err != nil {
					t.Fatalf("retry with the same slug: %v", err)
				}
				t.Cleanup(func() {
					for _, q := range []string{"DELETE FROM api_keys WHERE tenant_id = ?", "DELETE FROM users WHERE tenant_id = ?", "DELETE FROM tenants WHERE id = ?"} {
						if err := db.Exec(q, ten.ID).Error; err != nil {
							t.Error(err)
						}
					}
				})
				if ten.Slug != tt.slug || owner.TenantID != ten.ID {
					t.Errorf("retry created %+v owned by %+v", ten, owner)
				}
			})
		}

		t.Run("all three, the key working", func(t *testing.T) {
			ten, owner, plain, key, err := s.CreateTenantWithOwner(ctx, "acme", "Acme", "Ada@Acme.test")
			if err != nil {
				t.Fatal(err)
			}
			back, err := s.TenantBySlug(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ten, back); diff != "" {
				t.Errorf("tenant read back (-created +read):\n%s", diff)
			}
			if owner.Email != "ada@acme.test" || owner.Role != switchboard.RoleOwner || owner.TenantID != ten.ID {
				t.Errorf("owner %+v", owner)
			}
			if key.UserID != owner.ID || key.TenantID != ten.ID || key.Name != tenants.OwnerKeyName || key.Operator {
				t.Errorf("owner key %+v", key)
			}
			p, err := s.Authenticate(ctx, plain)
			if err != nil {
				t.Fatal(err)
			}
			want := switchboard.Principal{TenantID: ten.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: owner.ID, Role: switchboard.RoleOwner, KeyID: key.ID}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Errorf("the owner key's principal (-want +got):\n%s", diff)
			}
			_, _, _, _, err = s.CreateTenantWithOwner(ctx, "acme", "Again", "bob@acme.test")
			wantCode(t, err, switchboard.CodeConflict, "slug")
		})
	})
}
