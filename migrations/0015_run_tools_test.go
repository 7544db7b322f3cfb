package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestRunToolsColumns checks migration 0015 on both databases: the tenant's MCP
// settings and agents have a run-tools setting, empty (auto, or the tenant's) unless
// set, so existing tenants list the run tools only where they confirm calls.
func TestRunToolsColumns(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, table := range []string{"tenant_mcp_settings", "agents"} {
			if !db.Migrator().HasColumn(table, "run_tools") {
				t.Errorf("%s has no run_tools column", table)
			}
		}
		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ta15', 'ta15', 'A', CURRENT_TIMESTAMP)`,
			`INSERT INTO tenant_mcp_settings (tenant_id, confirm, tool_mode, updated_at) VALUES ('ta15', 'never', 'all', CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var runTools string
		if err := db.Raw(`SELECT run_tools FROM tenant_mcp_settings WHERE tenant_id = 'ta15'`).Scan(&runTools).Error; err != nil || runTools != "" {
			t.Errorf("run_tools of a row written without it = %q, %v; want empty", runTools, err)
		}
	})
}
