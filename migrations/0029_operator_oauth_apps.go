package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// operatorOAuthApp0029 is migration 0029's frozen copy of operator_oauth_apps: the
// deployment's OAuth app for a provider that the operator set in the UI, one per
// provider, its secret sealed. TenantID is always empty (the app is no tenant's); it is
// there so that key rotation re-seals the rows like every other sealed table. Never
// edit it.
type operatorOAuthApp0029 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	TenantID  string    `gorm:"size:40;not null;default:''"`
	Provider  string    `gorm:"size:64;not null;uniqueIndex:idx_operator_oauth_apps_provider"`
	ClientID  string    `gorm:"size:255;not null"`
	Sealed    []byte    `gorm:"not null"`
	KeyID     string    `gorm:"size:128;not null"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

func (operatorOAuthApp0029) TableName() string { return "operator_oauth_apps" }

// up0029OperatorOAuthApps creates operator_oauth_apps.
func up0029OperatorOAuthApps(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&operatorOAuthApp0029{}); err != nil {
		return fmt.Errorf("create operator_oauth_apps: %w", err)
	}
	return nil
}
