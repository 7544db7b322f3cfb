package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// mcpSessionKey0024 is migration 0024's frozen copy of the column it adds. Never edit it.
type mcpSessionKey0024 struct {
	KeyID string `gorm:"size:64;not null;default:''"`
}

func (mcpSessionKey0024) TableName() string { return "mcp_sessions" }

// up0024MCPSessionKeys adds mcp_sessions.key_id: a session is bound to the credential
// (API key or OAuth grant) that initialized it, not only to its principal. Sessions
// recorded before (an empty key_id) match no credential, so their clients initialize
// again.
func up0024MCPSessionKeys(tx *gorm.DB) error {
	if err := tx.Migrator().AddColumn(&mcpSessionKey0024{}, "KeyID"); err != nil {
		return fmt.Errorf("add mcp_sessions.key_id: %w", err)
	}
	return nil
}
