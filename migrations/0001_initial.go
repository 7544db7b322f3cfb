package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The structs below are migration 0001's frozen copies of the tables it creates. Never
// edit them: change the schema in a new migration with its own copies.

type tenant0001 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	Slug      string    `gorm:"size:40;not null;uniqueIndex:idx_tenants_slug"`
	Name      string    `gorm:"size:200;not null"`
	CreatedAt time.Time `gorm:"not null"`
}

func (tenant0001) TableName() string { return "tenants" }

type user0001 struct {
	ID           string     `gorm:"primaryKey;size:40"`
	TenantID     string     `gorm:"size:40;not null;uniqueIndex:idx_users_tenant_email,priority:1"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Email        string     `gorm:"size:254;not null;uniqueIndex:idx_users_tenant_email,priority:2"`
	Role         string     `gorm:"size:16;not null"`
	PasswordHash *string    `gorm:"size:255"`
	CreatedAt    time.Time  `gorm:"not null"`
}

func (user0001) TableName() string { return "users" }

type apiKey0001 struct {
	ID         string     `gorm:"primaryKey;size:40"`
	TenantID   string     `gorm:"size:40;not null;index:idx_api_keys_tenant_id"`
	Tenant     tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	UserID     string     `gorm:"size:40;not null;index:idx_api_keys_user_id"`
	User       user0001   `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	AgentID    *string    `gorm:"size:40"`
	Name       string     `gorm:"size:100;not null"`
	Prefix     string     `gorm:"size:16;not null;uniqueIndex:idx_api_keys_prefix"`
	Hash       string     `gorm:"size:64;not null"`
	Operator   bool       `gorm:"not null;default:false"`
	Scopes     string     `gorm:"size:2000;not null;default:''"`
	CreatedAt  time.Time  `gorm:"not null"`
	LastUsedAt *time.Time ``
	RevokedAt  *time.Time ``
}

func (apiKey0001) TableName() string { return "api_keys" }

type connection0001 struct {
	ID           string     `gorm:"primaryKey;size:40"`
	TenantID     string     `gorm:"size:40;not null;index:idx_connections_tenant_id"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	OwnerUserID  string     `gorm:"size:40;not null"`
	Provider     string     `gorm:"size:64;not null"`
	AuthKind     string     `gorm:"size:16;not null"`
	AccountID    string     `gorm:"size:255;not null"`
	AccountLabel string     `gorm:"size:255;not null"`
	Scopes       string     `gorm:"size:2000;not null"`
	Shared       bool       `gorm:"not null"`
	Status       string     `gorm:"size:32;not null"`
	Sealed       []byte     `gorm:"not null"`
	KeyID        string     `gorm:"size:128;not null"`
	ExpiresAt    *time.Time ``
	RefreshedAt  *time.Time ``
	Version      int64      `gorm:"not null"`
	CreatedAt    time.Time  ``
	UpdatedAt    time.Time  ``
}

func (connection0001) TableName() string { return "connections" }

type auditEvent0001 struct {
	ID             string     `gorm:"primaryKey;size:40"`
	TenantID       string     `gorm:"size:40;not null;index:idx_audit_tenant_at,priority:1"`
	Tenant         tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	At             time.Time  `gorm:"not null;index:idx_audit_tenant_at,priority:2"`
	Kind           string     `gorm:"size:32;not null"`
	Principal      string     `gorm:"size:64;not null"`
	KeyID          string     `gorm:"size:40"`
	Tool           string     `gorm:"size:64"`
	ConnectionID   string     `gorm:"size:40"`
	Outcome        string     `gorm:"size:32;not null"`
	UpstreamStatus int        ``
	LatencyMicros  int64      ``
	ArgsHash       string     `gorm:"size:64"`
	Detail         string     `gorm:"size:500"`
}

func (auditEvent0001) TableName() string { return "audit_events" }

// up0001Initial creates tenants, users, API keys, connections and audit events, with
// every tenant_id a foreign key to tenants(id) that cascades on delete.
func up0001Initial(tx *gorm.DB) error {
	for _, model := range []any{&tenant0001{}, &user0001{}, &apiKey0001{}, &connection0001{}, &auditEvent0001{}} {
		if err := tx.Migrator().CreateTable(model); err != nil {
			return fmt.Errorf("create table for %T: %w", model, err)
		}
	}
	return nil
}
