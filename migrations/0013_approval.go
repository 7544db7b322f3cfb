package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// up0013Approval adds the approval mode (who may confirm a call: "relay" or "person")
// to the tenant's MCP settings and to agents, where "" means the default (relay) for
// a tenant and the tenant's mode for an agent.
func up0013Approval(tx *gorm.DB) error {
	for _, table := range []string{"tenant_mcp_settings", "agents"} {
		if err := tx.Exec(`ALTER TABLE ` + table + ` ADD COLUMN approval VARCHAR(16) NOT NULL DEFAULT ''`).Error; err != nil {
			return fmt.Errorf("add %s.approval: %w", table, err)
		}
	}
	return nil
}
