package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// run0005 is migration 0005's frozen copy of the runs table. Never edit it: change the
// schema in a new migration with its own copy.
type run0005 struct {
	ID            string     `gorm:"primaryKey;size:40"`
	TenantID      string     `gorm:"size:40;not null;index:idx_runs_tenant_principal,priority:1"`
	Tenant        tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Principal     string     `gorm:"size:64;not null;index:idx_runs_tenant_principal,priority:2"`
	PrincipalKind string     `gorm:"size:16;not null"`
	UserID        string     `gorm:"size:40;not null"`
	AgentID       string     `gorm:"size:40;not null;default:''"`
	KeyID         string     `gorm:"size:40;not null;default:''"`
	Role          string     `gorm:"size:16;not null;default:''"`
	Tool          string     `gorm:"size:64;not null"`
	ConnectionID  string     `gorm:"size:40;not null"`
	Origin        string     `gorm:"size:16;not null"`
	State         string     `gorm:"size:16;not null;index:idx_runs_state_lease,priority:1"`
	Resumable     bool       `gorm:"not null"`
	InputSealed   []byte     `gorm:"not null"`
	InputKeyID    string     `gorm:"size:128;not null"`
	OutputSealed  []byte     ``
	OutputKeyID   string     `gorm:"size:128;not null;default:''"`
	ErrorCode     string     `gorm:"size:32;not null;default:''"`
	ErrorMessage  string     `gorm:"size:2000;not null;default:''"`
	// The confirmation the run waits for while input_required.
	ElicitationMessage   string     `gorm:"size:2000;not null;default:''"`
	ElicitationExpiresAt *time.Time ``
	ElicitationAction    string     `gorm:"size:16;not null;default:''"`
	// Which process runs it, until when: a run whose lease ran out is recovered.
	LeaseOwner string     `gorm:"size:64;not null;default:''"`
	LeaseUntil *time.Time `gorm:"index:idx_runs_state_lease,priority:2"`
	Attempts   int        `gorm:"not null;default:0"`
	CreatedAt  time.Time  `gorm:"not null;index:idx_runs_tenant_principal,priority:3"`
	UpdatedAt  time.Time  `gorm:"not null"`
	StartedAt  *time.Time ``
	FinishedAt *time.Time ``
}

func (run0005) TableName() string { return "runs" }

// up0005Runs creates runs: asynchronous tool runs, their sealed input and output, the
// confirmation they may wait for, and the lease of the process running them.
func up0005Runs(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&run0005{}); err != nil {
		return fmt.Errorf("create table runs: %w", err)
	}
	return nil
}
