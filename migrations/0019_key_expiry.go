package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// apiKeyExpiry0019 is migration 0019's frozen copy of the column it adds. Never edit it.
type apiKeyExpiry0019 struct {
	ExpiresAt *time.Time
}

func (apiKeyExpiry0019) TableName() string { return "api_keys" }

// up0019KeyExpiry adds api_keys.expires_at: a key may be made to stop working at a
// given time; existing keys (NULL) never expire.
func up0019KeyExpiry(tx *gorm.DB) error {
	if err := tx.Migrator().AddColumn(&apiKeyExpiry0019{}, "ExpiresAt"); err != nil {
		return fmt.Errorf("add api_keys.expires_at: %w", err)
	}
	return nil
}
