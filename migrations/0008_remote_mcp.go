package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// up0008RemoteMCP makes a remote MCP server's name unique within its tenant. A remote
// MCP server is a connection of provider "mcp" whose account_id is its name (the
// prefix of its tools), so the index is partial: other providers' connections may
// share an account (two users of one Slack team). SQLite and PostgreSQL both take
// partial indexes in this form.
func up0008RemoteMCP(tx *gorm.DB) error {
	if err := tx.Exec(`CREATE UNIQUE INDEX idx_connections_mcp_name ON connections (tenant_id, account_id) WHERE provider = 'mcp'`).Error; err != nil {
		return fmt.Errorf("create idx_connections_mcp_name: %w", err)
	}
	return nil
}
