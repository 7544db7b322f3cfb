package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// workflow0014 is migration 0014's frozen copy of the workflows table: a tenant's
// saved workflow definitions, one per name.
type workflow0014 struct {
	ID          string     `gorm:"primaryKey;size:40"`
	TenantID    string     `gorm:"size:40;not null;uniqueIndex:idx_workflows_tenant_name,priority:1"`
	Tenant      tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Name        string     `gorm:"size:64;not null;uniqueIndex:idx_workflows_tenant_name,priority:2"`
	Description string     `gorm:"size:1000;not null;default:''"`
	Category    string     `gorm:"size:64;not null;default:''"`
	// Definition is the definition as JSON (the one schema); Source is the text as
	// its author wrote it (YAML or JSON), for editing.
	Definition string    `gorm:"type:text;not null"`
	Source     string    `gorm:"type:text;not null"`
	CreatedBy  string    `gorm:"size:64;not null"`
	UpdatedBy  string    `gorm:"size:64;not null"`
	Version    int64     `gorm:"not null;default:1"`
	CreatedAt  time.Time `gorm:"not null"`
	UpdatedAt  time.Time `gorm:"not null"`
}

func (workflow0014) TableName() string { return "workflows" }

// workflowStep0014 is migration 0014's frozen copy of workflow_steps: the record of
// one step (or one item of a foreach step) of a workflow run, with its input and
// output sealed as the step completes.
type workflowStep0014 struct {
	ID           string     `gorm:"primaryKey;size:40"`
	TenantID     string     `gorm:"size:40;not null;uniqueIndex:idx_workflow_steps_run_step,priority:1"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	RunID        string     `gorm:"size:40;not null;uniqueIndex:idx_workflow_steps_run_step,priority:2"`
	Step         string     `gorm:"size:64;not null;uniqueIndex:idx_workflow_steps_run_step,priority:3"`
	Item         int        `gorm:"not null;uniqueIndex:idx_workflow_steps_run_step,priority:4"`
	Tool         string     `gorm:"size:64;not null;default:''"`
	ConnectionID string     `gorm:"size:40;not null;default:''"`
	State        string     `gorm:"size:16;not null"`
	Attempts     int        `gorm:"not null;default:0"`
	InputSealed  []byte     ``
	InputKeyID   string     `gorm:"size:128;not null;default:''"`
	OutputSealed []byte     ``
	OutputKeyID  string     `gorm:"size:128;not null;default:''"`
	ErrorCode    string     `gorm:"size:32;not null;default:''"`
	ErrorMessage string     `gorm:"size:2000;not null;default:''"`
	AuditID      string     `gorm:"size:40;not null;default:''"`
	StartedAt    *time.Time ``
	FinishedAt   *time.Time ``
	UpdatedAt    time.Time  `gorm:"not null"`
}

func (workflowStep0014) TableName() string { return "workflow_steps" }

// up0014Workflows creates workflows (saved definitions) and workflow_steps (the steps
// of workflow runs; the runs themselves are rows of runs).
func up0014Workflows(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&workflow0014{}); err != nil {
		return fmt.Errorf("create table workflows: %w", err)
	}
	if err := tx.Migrator().CreateTable(&workflowStep0014{}); err != nil {
		return fmt.Errorf("create table workflow_steps: %w", err)
	}
	return nil
}
