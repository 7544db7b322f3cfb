package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestApprovalColumns checks migration 0013 on both databases: the tenant's MCP
// settings and agents have an approval mode, empty unless set.
func TestApprovalColumns(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, table := range []string{"tenant_mcp_settings", "agents"} {
			if !db.Migrator().HasColumn(table, "approval") {
				t.Errorf("%s has no approval column", table)
			}
		}
		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ta13', 'ta13', 'A', CURRENT_TIMESTAMP)`,
			`INSERT INTO tenant_mcp_settings (tenant_id, confirm, tool_mode, updated_at) VALUES ('ta13', 'never', 'all', CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var approval string
		if err := db.Raw(`SELECT approval FROM tenant_mcp_settings WHERE tenant_id = 'ta13'`).Scan(&approval).Error; err != nil || approval != "" {
			t.Errorf("approval of a row written without it = %q, %v; want empty", approval, err)
		}
	})
}
