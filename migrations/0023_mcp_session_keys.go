package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// mcpSessionKey0023 is migration 0023's frozen copy of the column it adds. Never edit it.
type mcpSessionKey0023 struct {
	KeyID string `gorm:"size:64;not null;default:''"`
}

func (mcpSessionKey0023) TableName() string { return "mcp_sessions" }

// up0023MCPSessionKeys adds mcp_sessions.key_id: a session is bound to the credential
// (API key or OAuth grant) that initialized it, not only to its principal. Sessions
// recorded before (an empty key_id) match no credential, so their clients initialize
// again.
func up0023MCPSessionKeys(tx *gorm.DB) error {
	if err := tx.Migrator().AddColumn(&mcpSessionKey0023{}, "KeyID"); err != nil {
		return fmt.Errorf("add mcp_sessions.key_id: %w", err)
	}
	return nil
}
