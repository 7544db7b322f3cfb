package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// openAPIProvider0020 is migration 0020's frozen copy of the table it creates. Never
// edit it.
type openAPIProvider0020 struct {
	ID         string `gorm:"primaryKey;size:40"`
	TenantID   string `gorm:"size:40;not null;uniqueIndex:idx_openapi_providers_name,priority:1"`
	Name       string `gorm:"size:32;not null;uniqueIndex:idx_openapi_providers_name,priority:2"`
	Title      string `gorm:"size:255;not null"`
	BaseURL    string `gorm:"size:2000;not null"`
	SourceURL  string `gorm:"size:2000;not null"`
	Auth       string `gorm:"size:255;not null"`
	Operations string `gorm:"not null"`
	Tags       string `gorm:"not null"`
	Document   []byte `gorm:"not null"`
	CreatedBy  string `gorm:"size:40;not null"`
	CreatedAt  time.Time
}

func (openAPIProvider0020) TableName() string { return "openapi_providers" }

// up0020OpenAPIProviders creates openapi_providers: the API descriptions a tenant adds
// (POST /api/openapi-providers), each a provider of that tenant alone, named uniquely in
// it. The description is kept compressed; it holds no secret (credentials are the
// connections', sealed with them).
func up0020OpenAPIProviders(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&openAPIProvider0020{}); err != nil {
		return fmt.Errorf("create openapi_providers: %w", err)
	}
	return nil
}
