package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// mcpSession0010 is the frozen shape of an MCP session row: what any node needs to
// serve the session (who it belongs to, what the client negotiated) and when it was
// last used, so abandoned sessions expire.
type mcpSession0010 struct {
	ID              string     `gorm:"primaryKey;size:64"`
	TenantID        string     `gorm:"size:64;not null;index:idx_mcp_sessions_principal,priority:1"`
	PrincipalID     string     `gorm:"size:128;not null;index:idx_mcp_sessions_principal,priority:2"`
	AgentID         string     `gorm:"size:64;not null;default:''"`
	ProtocolVersion string     `gorm:"size:32;not null"`
	ClientInfo      string     `gorm:"type:text;not null"`
	Capabilities    string     `gorm:"type:text;not null"`
	LogLevel        string     `gorm:"size:16;not null;default:''"`
	CreatedAt       time.Time  `gorm:"not null;index:idx_mcp_sessions_created"`
	LastUsedAt      *time.Time `gorm:"index:idx_mcp_sessions_last_used"`
}

func (mcpSession0010) TableName() string { return "mcp_sessions" }

// up0010MCPSessions creates mcp_sessions: the hub issues and records every MCP session,
// so any node serves it, an unknown or ended id is refused, and sessions are bounded.
func up0010MCPSessions(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&mcpSession0010{}); err != nil {
		return fmt.Errorf("create mcp_sessions: %w", err)
	}
	return nil
}
