package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestConnectLinksMigration checks migration 0030 on both databases: the connect_links
// table, and a catalog setting on the tenant's MCP settings and agents that is empty
// (connected, or the tenant's) for rows written without it.
func TestConnectLinksMigration(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, table := range []string{"tenant_mcp_settings", "agents"} {
			if !db.Migrator().HasColumn(table, "catalog") {
				t.Errorf("%s has no catalog column", table)
			}
		}
		for _, col := range []string{"id", "tenant_id", "user_id", "principal", "provider", "connection_id", "scopes", "expires_at", "used_at", "connected_at", "connected", "created_at"} {
			if !db.Migrator().HasColumn("connect_links", col) {
				t.Errorf("connect_links has no %s column", col)
			}
		}
		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ta27', 'ta27', 'A', CURRENT_TIMESTAMP)`,
			`INSERT INTO tenant_mcp_settings (tenant_id, confirm, tool_mode, updated_at) VALUES ('ta27', 'never', 'all', CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var catalog string
		if err := db.Raw(`SELECT catalog FROM tenant_mcp_settings WHERE tenant_id = 'ta27'`).Scan(&catalog).Error; err != nil || catalog != "" {
			t.Errorf("catalog of a row written without it = %q, %v; want empty", catalog, err)
		}
	})
}
