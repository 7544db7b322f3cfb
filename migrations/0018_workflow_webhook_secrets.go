package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// workflowSecret0018 is migration 0018's frozen copy of workflow_webhook_secrets: the
// signing secret of a workflow's webhook trigger (GitHub's webhook secret, Slack's
// signing secret), sealed, one per workflow and provider.
type workflowSecret0018 struct {
	TenantID     string     `gorm:"size:40;not null"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	WorkflowID   string     `gorm:"primaryKey;size:40"`
	Provider     string     `gorm:"primaryKey;size:32"`
	SecretSealed []byte     `gorm:"not null"`
	KeyID        string     `gorm:"size:128;not null"`
	UpdatedBy    string     `gorm:"size:64;not null"`
	UpdatedAt    time.Time  `gorm:"not null"`
}

func (workflowSecret0018) TableName() string { return "workflow_webhook_secrets" }

// up0018WorkflowWebhookSecrets creates workflow_webhook_secrets.
func up0018WorkflowWebhookSecrets(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&workflowSecret0018{}); err != nil {
		return fmt.Errorf("create table workflow_webhook_secrets: %w", err)
	}
	return nil
}
