package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// connectLink0030 is migration 0030's frozen copy of the connect_links table. Never
// edit it.
type connectLink0030 struct {
	ID           string    `gorm:"primaryKey;size:64"`
	TenantID     string    `gorm:"size:40;not null;index:idx_connect_links_tenant"`
	UserID       string    `gorm:"size:40;not null"`
	Principal    string    `gorm:"size:80;not null"`
	Provider     string    `gorm:"size:64;not null"`
	ConnectionID string    `gorm:"size:40;not null;default:''"`
	Scopes       string    `gorm:"size:2000;not null;default:''"`
	ExpiresAt    time.Time `gorm:"not null"`
	UsedAt       *time.Time
	ConnectedAt  *time.Time
	Connected    string    `gorm:"size:40;not null;default:''"`
	CreatedAt    time.Time `gorm:"not null"`
}

func (connectLink0030) TableName() string { return "connect_links" }

// up0030ConnectLinks adds the connect links a tool call gives a person to connect an
// account from the conversation (ID is the SHA-256 of the link's secret), and the
// catalog setting (which providers an MCP endpoint lists: "connected" or "all") to the
// tenant's MCP settings and to agents, where "" means connected for a tenant and the
// tenant's setting for an agent.
func up0030ConnectLinks(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&connectLink0030{}); err != nil {
		return fmt.Errorf("create connect_links: %w", err)
	}
	for _, table := range []string{"tenant_mcp_settings", "agents"} {
		if err := tx.Exec(`ALTER TABLE ` + table + ` ADD COLUMN catalog VARCHAR(16) NOT NULL DEFAULT ''`).Error; err != nil {
			return fmt.Errorf("add %s.catalog: %w", table, err)
		}
	}
	return nil
}
