package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// runKind0026 is migration 0026's frozen copy of the columns it adds. Never edit it.
type runKind0026 struct {
	Kind            string `gorm:"size:16;not null;default:''"`
	Workflow        string `gorm:"size:64;not null;default:''"`
	WorkflowVersion int64  `gorm:"not null;default:0"`
	Context         string `gorm:"size:2000;not null;default:''"`
}

func (runKind0026) TableName() string { return "runs" }

// workflowLifecycle0026 is migration 0026's frozen copy of the workflows columns it
// adds. Never edit it.
type workflowLifecycle0026 struct {
	Deactivated   bool `gorm:"not null;default:false"`
	DeactivatedAt *time.Time
	DeletedAt     *time.Time
}

func (workflowLifecycle0026) TableName() string { return "workflows" }

// workflowSettings0026 is migration 0026's frozen copy of workflow_settings. Never
// edit it.
type workflowSettings0026 struct {
	TenantID    string     `gorm:"primaryKey;size:40"`
	Tenant      tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	ToolAliases bool       `gorm:"not null;default:false"`
	UpdatedAt   time.Time  `gorm:"not null"`
}

func (workflowSettings0026) TableName() string { return "workflow_settings" }

// workflowVersion0026 is migration 0026's frozen copy of workflow_versions: the kept
// versions of each workflow's definition. Never edit it.
type workflowVersion0026 struct {
	ID         string     `gorm:"primaryKey;size:40"`
	TenantID   string     `gorm:"size:40;not null;uniqueIndex:idx_workflow_versions_version,priority:1"`
	Tenant     tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	WorkflowID string     `gorm:"size:40;not null;uniqueIndex:idx_workflow_versions_version,priority:2"`
	Version    int64      `gorm:"not null;uniqueIndex:idx_workflow_versions_version,priority:3"`
	Definition string     `gorm:"type:text;not null"`
	CreatedBy  string     `gorm:"size:64;not null"`
	CreatedAt  time.Time  `gorm:"not null"`
}

func (workflowVersion0026) TableName() string { return "workflow_versions" }

// workflowLive0026 is migration 0026's frozen copy of workflows.live_version. Never
// edit it.
type workflowLive0026 struct {
	LiveVersion int64 `gorm:"not null;default:0"`
}

func (workflowLive0026) TableName() string { return "workflows" }

// up0026RunKinds adds runs.kind, workflow, workflow_version and context: a saved
// workflow's run says so on its row (its kind, the workflow and the version it ran)
// rather than by its tool's name, and keeps the caller's context. Runs recorded
// before are read by their tool's name once: those of a tool workflow_<name> are
// marked as that workflow's and recorded under its run_flow__<name>, the name that
// agents' selections now use too. It adds the workflows' lifecycle (deactivated, deleted:
// their tools stay listed, marked, for a while) and workflow_settings (a tenant's
// choice to keep the workflow_<name> tools), workflow_versions (the kept versions of
// each definition, the current one kept for each workflow saved before) and
// workflows.live_version (the version live runs run; the current one before).
func up0026RunKinds(tx *gorm.DB) error {
	for _, col := range []string{"Deactivated", "DeactivatedAt", "DeletedAt"} {
		if err := tx.Migrator().AddColumn(&workflowLifecycle0026{}, col); err != nil {
			return fmt.Errorf("add workflows.%s: %w", col, err)
		}
	}
	if err := tx.Migrator().CreateTable(&workflowSettings0026{}); err != nil {
		return fmt.Errorf("create workflow_settings: %w", err)
	}
	if err := tx.Migrator().CreateTable(&workflowVersion0026{}); err != nil {
		return fmt.Errorf("create workflow_versions: %w", err)
	}
	if err := tx.Migrator().AddColumn(&workflowLive0026{}, "LiveVersion"); err != nil {
		return fmt.Errorf("add workflows.live_version: %w", err)
	}
	// Each workflow's current version is kept and live.
	if err := tx.Exec(`INSERT INTO workflow_versions (id, tenant_id, workflow_id, version, definition, created_by, created_at)
		SELECT 'wfv_' || id, tenant_id, id, version, definition, updated_by, updated_at FROM workflows`).Error; err != nil {
		return fmt.Errorf("keep the workflows' versions: %w", err)
	}
	if err := tx.Exec(`UPDATE workflows SET live_version = version`).Error; err != nil {
		return fmt.Errorf("publish the workflows' versions: %w", err)
	}
	for _, col := range []string{"Kind", "Workflow", "WorkflowVersion", "Context"} {
		if err := tx.Migrator().AddColumn(&runKind0026{}, col); err != nil {
			return fmt.Errorf("add runs.%s: %w", col, err)
		}
	}
	if err := tx.Exec(`UPDATE runs SET kind = 'workflow', workflow = substr(tool, 10), tool = 'run_flow__' || substr(tool, 10) WHERE tool LIKE 'workflow\_%' ESCAPE '\'`).Error; err != nil {
		return fmt.Errorf("mark workflow runs: %w", err)
	}
	// An agent's selected workflow is now its tool run_flow__<name>.
	if err := tx.Exec(`UPDATE agent_tools SET tool = 'run_flow__' || substr(tool, 10) WHERE tool LIKE 'workflow\_%' ESCAPE '\'`).Error; err != nil {
		return fmt.Errorf("rename agents' workflow tools: %w", err)
	}
	if err := tx.Exec(`CREATE INDEX IF NOT EXISTS idx_runs_workflow ON runs (tenant_id, kind, workflow)`).Error; err != nil {
		return fmt.Errorf("index runs by workflow: %w", err)
	}
	return nil
}
