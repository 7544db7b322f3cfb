package openapis

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// API is one description a tenant added: its options and the description itself. It
// holds no secret: a connection's credentials are sealed with the connection.
type API struct {
	ID         string               `gorm:"primaryKey;size:40"`
	TenantID   switchboard.TenantID `gorm:"size:40;not null"`
	Name       string               `gorm:"size:32;not null"`
	Title      string               `gorm:"size:255;not null"`
	BaseURL    string               `gorm:"size:2000;not null"`
	SourceURL  string               `gorm:"size:2000;not null"` // where the description was fetched from; "" when given inline
	Auth       string               `gorm:"size:255;not null"`  // the securitySchemes entry used; "" for the description's first
	Operations []string             `gorm:"serializer:json;not null"`
	Tags       []string             `gorm:"serializer:json;not null"`
	Document   []byte               `gorm:"not null"` // the description, gzip-compressed
	// OAuthClientID is the API's OAuth app at its authorization server (authorization
	// code or client credentials); its secret is sealed in OAuthSecretSealed.
	OAuthClientID     string `gorm:"column:oauth_client_id;size:255;not null;default:''"`
	OAuthSecretSealed []byte `gorm:"column:oauth_secret_sealed"`
	OAuthSecretKeyID  string `gorm:"column:oauth_secret_key_id;size:128;not null;default:''"`
	CreatedBy         string `gorm:"size:40;not null"`
	CreatedAt         time.Time
}

// TableName is the table migration 0020 creates.
func (API) TableName() string { return "openapi_providers" }

// Store keeps the tenants' APIs. Every method takes the tenant.
type Store struct{ db *gorm.DB }

// NewStore returns a Store on db (migrated).
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// create stores a new API; a name the tenant already uses is a conflict on "name".
func (s *Store) create(ctx context.Context, tenant switchboard.TenantID, a *API) error {
	a.TenantID = tenant
	if a.ID == "" {
		a.ID = switchboard.NewID("oas")
	}
	if a.Operations == nil {
		a.Operations = []string{}
	}
	if a.Tags == nil {
		a.Tags = []string{}
	}
	err := s.db.WithContext(ctx).Create(a).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: fmt.Sprintf("the tenant already has an API named %q; delete it first or pick another name", a.Name)}
	}
	if err != nil {
		return fmt.Errorf("create openapi provider: %w", err)
	}
	return nil
}

// list returns the tenant's APIs by name, without their descriptions.
func (s *Store) list(ctx context.Context, tenant switchboard.TenantID) ([]API, error) {
	var out []API
	err := s.db.WithContext(ctx).Omit("document").Where("tenant_id = ?", tenant).Order("name").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list openapi providers: %w", err)
	}
	return out, nil
}

// get returns the tenant's API of that name, description included; not found when the
// tenant has none by that name.
func (s *Store) get(ctx context.Context, tenant switchboard.TenantID, name string) (API, error) {
	var a API
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND name = ?", tenant, name).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return API{}, switchboard.NotFound("API " + name)
	}
	if err != nil {
		return API{}, fmt.Errorf("read openapi provider: %w", err)
	}
	return a, nil
}

// delete removes the tenant's API of that name; not found when there is none.
func (s *Store) delete(ctx context.Context, tenant switchboard.TenantID, name string) error {
	res := s.db.WithContext(ctx).Where("tenant_id = ? AND name = ?", tenant, name).Delete(&API{})
	if res.Error != nil {
		return fmt.Errorf("delete openapi provider: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return switchboard.NotFound("API " + name)
	}
	return nil
}

// compress gzips a description for storage.
func compress(data []byte) ([]byte, error) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decompress is compress's inverse, bounded by the largest description accepted.
func decompress(data []byte, limit int64) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("stored description is larger than %d bytes", limit)
	}
	return out, nil
}
