package migrations_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestWebTables checks migration 0006's tables on both databases: their columns, that
// a session's and a link's token hash is unique, and that both go with their tenant.
func TestWebTables(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tables := []struct {
			name    string
			table   string
			columns []string
		}{
			{name: "sessions", table: "web_sessions", columns: []string{"id", "tenant_id", "user_id", "token_hash", "created_at", "expires_at", "last_seen_at"}},
			{name: "invitations", table: "invitations", columns: []string{"id", "tenant_id", "user_id", "email", "role", "token_hash", "created_by", "created_at", "expires_at", "used_at"}},
		}
		for _, tt := range tables {
			types, err := db.Migrator().ColumnTypes(tt.table)
			if err != nil {
				t.Fatalf("columns of %s: %v", tt.table, err)
			}
			var got []string
			for _, c := range types {
				got = append(got, c.Name())
			}
			want := slices.Clone(tt.columns)
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("columns of %s (-want +got):\n%s", tt.table, diff)
			}
		}
		steps := []struct {
			name    string
			sql     string
			wantErr bool
		}{
			{name: "tenant", sql: `INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_w', 'web', 'Web', CURRENT_TIMESTAMP)`},
			{name: "user", sql: `INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_w', 'ten_w', 'w@web.test', 'owner', CURRENT_TIMESTAMP)`},
			{name: "session", sql: `INSERT INTO web_sessions (id, tenant_id, user_id, token_hash, created_at, expires_at, last_seen_at) VALUES ('ses_1', 'ten_w', 'usr_w', 'h1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`},
			{name: "session with the same token hash", sql: `INSERT INTO web_sessions (id, tenant_id, user_id, token_hash, created_at, expires_at, last_seen_at) VALUES ('ses_2', 'ten_w', 'usr_w', 'h1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, wantErr: true},
			{name: "session of a missing user", sql: `INSERT INTO web_sessions (id, tenant_id, user_id, token_hash, created_at, expires_at, last_seen_at) VALUES ('ses_3', 'ten_w', 'usr_nobody', 'h3', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, wantErr: true},
			{name: "invitation", sql: `INSERT INTO invitations (id, tenant_id, email, role, token_hash, created_by, created_at, expires_at) VALUES ('inv_1', 'ten_w', 'm@web.test', 'member', 'i1', 'user:usr_w', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`},
			{name: "invitation with the same token hash", sql: `INSERT INTO invitations (id, tenant_id, email, role, token_hash, created_by, created_at, expires_at) VALUES ('inv_2', 'ten_w', 'n@web.test', 'member', 'i1', 'user:usr_w', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`, wantErr: true},
		}
		for _, s := range steps {
			err := db.Exec(s.sql).Error
			if (err != nil) != s.wantErr {
				t.Fatalf("%s: err = %v, want error %v", s.name, err, s.wantErr)
			}
		}
		if err := db.Exec(`DELETE FROM tenants WHERE id = 'ten_w'`).Error; err != nil {
			t.Fatalf("delete tenant: %v", err)
		}
		for _, table := range []string{"web_sessions", "invitations"} {
			var n int64
			if err := db.Table(table).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s holds %d rows after its tenant was deleted, want 0", table, n)
			}
		}
	})
}
