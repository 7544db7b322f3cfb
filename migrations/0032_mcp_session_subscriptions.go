package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// mcpSessionSubscriptions0032 is migration 0032's frozen copy of the column it adds.
// Never edit it.
type mcpSessionSubscriptions0032 struct {
	Subscriptions string `gorm:"type:text;not null;default:'[]'"`
}

func (mcpSessionSubscriptions0032) TableName() string { return "mcp_sessions" }

// up0032MCPSessionSubscriptions adds mcp_sessions.subscriptions: the resource URIs a
// session subscribed to, so a node that restores the session keeps following them.
func up0032MCPSessionSubscriptions(tx *gorm.DB) error {
	if err := tx.Migrator().AddColumn(&mcpSessionSubscriptions0032{}, "Subscriptions"); err != nil {
		return fmt.Errorf("add mcp_sessions.subscriptions: %w", err)
	}
	return nil
}
