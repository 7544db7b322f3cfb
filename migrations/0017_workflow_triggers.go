package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// workflowFiring0017 is migration 0017's frozen copy of workflow_firings: one row per
// firing of a workflow's schedule, whose unique key lets one node of a fleet, and only
// one, start the run.
type workflowFiring0017 struct {
	ID         string     `gorm:"primaryKey;size:40"`
	TenantID   string     `gorm:"size:40;not null"`
	Tenant     tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	WorkflowID string     `gorm:"size:40;not null;uniqueIndex:idx_workflow_firings_once,priority:1"`
	Trigger    string     `gorm:"size:80;not null;uniqueIndex:idx_workflow_firings_once,priority:2"`
	FireAt     time.Time  `gorm:"not null;uniqueIndex:idx_workflow_firings_once,priority:3"`
	RunID      string     `gorm:"size:40;not null;default:''"`
	CreatedAt  time.Time  `gorm:"not null"`
}

func (workflowFiring0017) TableName() string { return "workflow_firings" }

// up0017WorkflowTriggers adds workflows.scheduled (the workflow has a schedule, for
// the schedulers' scan) and workflow_firings (each schedule firing and each webhook
// delivery, once).
func up0017WorkflowTriggers(tx *gorm.DB) error {
	if err := tx.Exec(`ALTER TABLE workflows ADD COLUMN scheduled BOOLEAN NOT NULL DEFAULT FALSE`).Error; err != nil {
		return fmt.Errorf("add workflows.scheduled: %w", err)
	}
	if err := tx.Migrator().CreateTable(&workflowFiring0017{}); err != nil {
		return fmt.Errorf("create table workflow_firings: %w", err)
	}
	return nil
}
