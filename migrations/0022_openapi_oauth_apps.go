package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// openAPIOAuthApp0022 is migration 0022's frozen copy of the columns it adds. Never
// edit it.
type openAPIOAuthApp0022 struct {
	OAuthClientID    string `gorm:"column:oauth_client_id;size:255;not null;default:''"`
	OAuthSecretSeal  []byte `gorm:"column:oauth_secret_sealed"`
	OAuthSecretKeyID string `gorm:"column:oauth_secret_key_id;size:128;not null;default:''"`
}

func (openAPIOAuthApp0022) TableName() string { return "openapi_providers" }

// up0022OpenAPIOAuthApps adds a tenant API's OAuth app (the client it has at the API's
// authorization server, for the authorization code and client credentials flows): its
// client id, and its secret sealed by the keyring (with the key's id, so key rotation
// re-seals it).
func up0022OpenAPIOAuthApps(tx *gorm.DB) error {
	for _, f := range []string{"OAuthClientID", "OAuthSecretSeal", "OAuthSecretKeyID"} {
		if err := tx.Migrator().AddColumn(&openAPIOAuthApp0022{}, f); err != nil {
			return fmt.Errorf("add openapi_providers.%s: %w", f, err)
		}
	}
	return nil
}
