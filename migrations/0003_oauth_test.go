package migrations_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestOAuthMigrationTables(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tests := []struct {
			name    string
			table   string
			columns []string
		}{
			{name: "oauth states", table: "oauth_states", columns: []string{"id", "tenant_id", "user_id", "provider", "client_id", "browser_hash", "redirect_uri", "sealed", "key_id", "expires_at", "used_at", "created_at"}},
			{name: "oauth apps", table: "oauth_apps", columns: []string{"id", "tenant_id", "provider", "client_id", "sealed", "key_id", "created_at", "updated_at"}},
		}
		for _, tt := range tests {
			types, err := db.Migrator().ColumnTypes(tt.table)
			if err != nil {
				t.Fatalf("%s: columns of %s: %v", tt.name, tt.table, err)
			}
			var got []string
			for _, c := range types {
				got = append(got, c.Name())
			}
			want := slices.Clone(tt.columns)
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: columns (-want +got):\n%s", tt.name, diff)
			}
		}
	})
}

func TestOAuthMigrationConstraints(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_a', 'ten_a', 'a@acme.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO oauth_apps (id, tenant_id, provider, client_id, sealed, key_id, created_at, updated_at) VALUES ('oap_1', 'ten_a', 'github', 'cid', 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO oauth_states (id, tenant_id, user_id, provider, client_id, browser_hash, redirect_uri, sealed, key_id, expires_at, created_at) VALUES ('h1', 'ten_a', 'usr_a', 'github', 'cid', 'b', 'https://hub.test/oauth/callback', 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO connections (id, tenant_id, owner_user_id, provider, auth_kind, account_id, account_label, scopes, shared, status, sealed, key_id, version, created_at, updated_at) VALUES ('con_1', 'ten_a', 'usr_a', 'github', 'oauth2', '1', 'octocat', '', false, 'active', 'x', 'k1', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var row struct {
			Refreshable      bool
			LastRefreshError string
			RefreshClaim     string
		}
		if err := db.Raw(`SELECT refreshable, last_refresh_error, refresh_claim FROM connections WHERE id = 'con_1'`).Scan(&row).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(struct {
			Refreshable      bool
			LastRefreshError string
			RefreshClaim     string
		}{}, row); diff != "" {
			t.Errorf("defaults of the new connection columns (-want +got):\n%s", diff)
		}
		if err := db.Exec(`INSERT INTO oauth_apps (id, tenant_id, provider, client_id, sealed, key_id, created_at, updated_at) VALUES ('oap_2', 'ten_a', 'github', 'other', 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`).Error; err == nil {
			t.Error("a second OAuth app of one tenant for one provider was inserted")
		}
		if err := db.Exec(`DELETE FROM tenants WHERE id = 'ten_a'`).Error; err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"oauth_apps", "oauth_states"} {
			var n int64
			if err := db.Table(table).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s: %d rows left after the tenant was deleted", table, n)
			}
		}
	})
}
