package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestRemoteMCPNames checks migration 0008 on both databases: a remote MCP server's
// name (its account_id) is unique within its tenant, while other providers' connections
// may share an account, and another tenant may use the same name.
func TestRemoteMCPNames(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		insert := func(id, tenant, provider, account string) string {
			return `INSERT INTO connections (id, tenant_id, owner_user_id, provider, auth_kind, account_id, account_label, scopes, meta, shared, status, sealed, key_id, version, created_at, updated_at, refreshable, last_refresh_error, refresh_claim) VALUES ('` +
				id + `', '` + tenant + `', 'usr_` + tenant + `', '` + provider + `', 'none', '` + account + `', 'x', '', '{}', false, 'active', 'x', 'k1', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, false, '', '')`
		}
		steps := []struct {
			name    string
			sql     string
			wantErr bool
		}{
			{name: "tenant a", sql: `INSERT INTO tenants (id, slug, name, created_at) VALUES ('ta', 'ta', 'A', CURRENT_TIMESTAMP)`},
			{name: "tenant b", sql: `INSERT INTO tenants (id, slug, name, created_at) VALUES ('tb', 'tb', 'B', CURRENT_TIMESTAMP)`},
			{name: "user a", sql: `INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_ta', 'ta', 'a@a.test', 'owner', CURRENT_TIMESTAMP)`},
			{name: "user b", sql: `INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_tb', 'tb', 'b@b.test', 'owner', CURRENT_TIMESTAMP)`},
			{name: "remote server docs", sql: insert("con_1", "ta", "mcp", "docs")},
			{name: "another remote server named docs in the tenant", sql: insert("con_2", "ta", "mcp", "docs"), wantErr: true},
			{name: "a remote server named docs in another tenant", sql: insert("con_3", "tb", "mcp", "docs")},
			{name: "another name", sql: insert("con_4", "ta", "mcp", "wiki")},
			{name: "two slack connections of one account", sql: insert("con_5", "ta", "slack", "T1")},
			{name: "the second slack connection", sql: insert("con_6", "ta", "slack", "T1")},
		}
		for _, s := range steps {
			err := db.Exec(s.sql).Error
			if (err != nil) != s.wantErr {
				t.Fatalf("%s: err = %v, want error %v", s.name, err, s.wantErr)
			}
		}
	})
}
