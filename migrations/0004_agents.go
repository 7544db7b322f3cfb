package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The structs below are migration 0004's frozen copies of the tables it creates. Never
// edit them: change the schema in a new migration with its own copies.

type agent0004 struct {
	ID           string     `gorm:"primaryKey;size:40"`
	TenantID     string     `gorm:"size:40;not null;uniqueIndex:idx_agents_tenant_name,priority:1"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Name         string     `gorm:"size:100;not null;uniqueIndex:idx_agents_tenant_name,priority:2"`
	Description  string     `gorm:"size:2000;not null;default:''"`
	Instructions string     `gorm:"type:text;not null;default:''"`
	Confirm      string     `gorm:"size:16;not null;default:''"`
	ToolMode     string     `gorm:"size:16;not null;default:''"`
	CreatedBy    string     `gorm:"size:40;not null"`
	Creator      user0001   `gorm:"foreignKey:CreatedBy;constraint:OnDelete:CASCADE"`
	Version      int64      `gorm:"not null"`
	CreatedAt    time.Time  `gorm:"not null"`
	UpdatedAt    time.Time  `gorm:"not null"`
}

func (agent0004) TableName() string { return "agents" }

type agentTool0004 struct {
	AgentID      string     `gorm:"primaryKey;size:40"`
	Agent        agent0004  `gorm:"foreignKey:AgentID;constraint:OnDelete:CASCADE"`
	Tool         string     `gorm:"primaryKey;size:64"`
	TenantID     string     `gorm:"size:40;not null;index:idx_agent_tools_tenant_connection,priority:1"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	ConnectionID string     `gorm:"size:40;not null;index:idx_agent_tools_tenant_connection,priority:2"`
	Position     int        `gorm:"not null"`
}

func (agentTool0004) TableName() string { return "agent_tools" }

type tenantMCPSettings0004 struct {
	TenantID  string     `gorm:"primaryKey;size:40"`
	Tenant    tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Confirm   string     `gorm:"size:16;not null"`
	ToolMode  string     `gorm:"size:16;not null"`
	UpdatedAt time.Time  `gorm:"not null"`
}

func (tenantMCPSettings0004) TableName() string { return "tenant_mcp_settings" }

// up0004Agents creates agents (name, description, instructions, confirm policy and
// tool mode, each empty for "the tenant's"), agent_tools (each selected tool with the
// connection it is bound to) and tenant_mcp_settings (a tenant's confirm policy and
// tool mode). Deleting a tenant, an agent or the agent's creator deletes its rows; a
// deleted connection's agent_tools rows are removed by the agents service.
func up0004Agents(tx *gorm.DB) error {
	for _, model := range []any{&agent0004{}, &agentTool0004{}, &tenantMCPSettings0004{}} {
		if err := tx.Migrator().CreateTable(model); err != nil {
			return fmt.Errorf("create table for %T: %w", model, err)
		}
	}
	return nil
}
