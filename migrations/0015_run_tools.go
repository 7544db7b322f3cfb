package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// up0015RunTools adds the run-tools setting (whether an MCP endpoint lists the
// switchboard_ run tools: "auto", "on" or "off") to the tenant's MCP settings and to
// agents, where "" means auto for a tenant and the tenant's setting for an agent.
func up0015RunTools(tx *gorm.DB) error {
	for _, table := range []string{"tenant_mcp_settings", "agents"} {
		if err := tx.Exec(`ALTER TABLE ` + table + ` ADD COLUMN run_tools VARCHAR(16) NOT NULL DEFAULT ''`).Error; err != nil {
			return fmt.Errorf("add %s.run_tools: %w", table, err)
		}
	}
	return nil
}
