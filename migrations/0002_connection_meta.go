package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// up0002ConnectionMeta gives connections a meta column: the account's non-secret data
// that a provider's operations need (the Atlassian cloud id of a Jira connection).
func up0002ConnectionMeta(tx *gorm.DB) error {
	if err := tx.Exec(`ALTER TABLE connections ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'`).Error; err != nil {
		return fmt.Errorf("add connections.meta: %w", err)
	}
	return nil
}
