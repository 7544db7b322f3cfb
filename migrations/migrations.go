// Package migrations holds the schema's numbered, append-only migrations and runs the
// pending ones at start-up. Each migration has its own frozen copy of the structs it
// creates, so later changes to the domain types never rewrite history.
//
// Start from [Run], [Applied] and [Versions].
package migrations

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one schema change. Version numbers are unique and only ever appended.
type migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

// all returns every migration in version order. Append new ones at the end.
func all() []migration {
	return []migration{
		{Version: 1, Name: "initial", Up: up0001Initial},
		{Version: 2, Name: "connection_meta", Up: up0002ConnectionMeta},
		{Version: 3, Name: "oauth", Up: up0003OAuth},
		{Version: 4, Name: "agents", Up: up0004Agents},
		{Version: 5, Name: "runs", Up: up0005Runs},
		{Version: 6, Name: "web", Up: up0006Web},
		{Version: 7, Name: "key_rotations", Up: up0007KeyRotations},
		{Version: 8, Name: "remote_mcp", Up: up0008RemoteMCP},
		{Version: 9, Name: "audit_connection_index", Up: up0009AuditConnectionIndex},
		{Version: 10, Name: "mcp_sessions", Up: up0010MCPSessions},
		{Version: 11, Name: "private_connection_use", Up: up0011PrivateConnectionUse},
		{Version: 12, Name: "nodes", Up: up0012Nodes},
		{Version: 13, Name: "approval", Up: up0013Approval},
		{Version: 14, Name: "workflows", Up: up0014Workflows},
		{Version: 15, Name: "run_tools", Up: up0015RunTools},
		{Version: 16, Name: "oauth_server", Up: up0016OAuthServer},
		{Version: 17, Name: "workflow_triggers", Up: up0017WorkflowTriggers},
		{Version: 18, Name: "workflow_webhook_secrets", Up: up0018WorkflowWebhookSecrets},
		{Version: 19, Name: "key_expiry", Up: up0019KeyExpiry},
		{Version: 20, Name: "openapi_providers", Up: up0020OpenAPIProviders},
		{Version: 21, Name: "sso", Up: up0021SSO},
		{Version: 22, Name: "openapi_oauth_apps", Up: up0022OpenAPIOAuthApps},
		{Version: 23, Name: "sso_links", Up: up0023SSOLinks},
		{Version: 24, Name: "mcp_session_keys", Up: up0024MCPSessionKeys},
		{Version: 25, Name: "audit_in_flight", Up: up0025AuditInFlight},
		{Version: 26, Name: "run_kinds", Up: up0026RunKinds},
		{Version: 27, Name: "mcp_stream_events", Up: up0027MCPStreamEvents},
		{Version: 28, Name: "connection_rate_limits", Up: up0028ConnectionRateLimits},
		{Version: 29, Name: "operator_oauth_apps", Up: up0029OperatorOAuthApps},
		{Version: 30, Name: "connect_links", Up: up0030ConnectLinks},
		{Version: 31, Name: "usage_hourly", Up: up0031UsageHourly},
		{Version: 32, Name: "mcp_session_subscriptions", Up: up0032MCPSessionSubscriptions},
		{Version: 33, Name: "run_input_requests", Up: up0033RunInputRequests},
	}
}

// Versions returns the version of every migration, in order: what Applied returns once
// Run has run.
func Versions() []int {
	var v []int
	for _, m := range all() {
		v = append(v, m.Version)
	}
	return v
}

// schemaMigration is a row of schema_migrations: one applied migration.
type schemaMigration struct {
	Version   int       `gorm:"primaryKey;autoIncrement:false"`
	Name      string    `gorm:"size:200;not null"`
	AppliedAt time.Time `gorm:"not null"`
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// Run applies the pending migrations in order, each in its own transaction that also
// records it in schema_migrations. It is idempotent, and safe when several processes
// start at once: on PostgreSQL each transaction holds an advisory lock scoped to the
// current schema; on SQLite the transaction takes the write lock when it begins.
func Run(ctx context.Context, db *gorm.DB) error {
	for _, m := range all() {
		if err := apply(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}

// Applied returns the versions recorded in schema_migrations, in order.
func Applied(ctx context.Context, db *gorm.DB) ([]int, error) {
	var versions []int
	if err := db.WithContext(ctx).Model(&schemaMigration{}).Order("version").Pluck("version", &versions).Error; err != nil {
		return nil, fmt.Errorf("list applied migrations: %w", err)
	}
	return versions, nil
}

func apply(ctx context.Context, db *gorm.DB, m migration) error {
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if tx.Dialector.Name() == "postgres" {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext('switchboard.migrations.' || current_schema()))").Error; err != nil {
				return fmt.Errorf("take migration lock: %w", err)
			}
		}
		if err := tx.Exec(createSchemaMigrations).Error; err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var n int64
		if err := tx.Model(&schemaMigration{}).Where("version = ?", m.Version).Count(&n).Error; err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		if n > 0 {
			return nil
		}
		if err := m.Up(tx); err != nil {
			return err
		}
		row := schemaMigration{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC().Truncate(time.Microsecond)}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("record migration: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
	}
	return nil
}

// createSchemaMigrations is portable DDL: the same statement works on SQLite and
// PostgreSQL, and IF NOT EXISTS makes it cheap to repeat under the lock.
const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version integer PRIMARY KEY,
	name varchar(200) NOT NULL,
	applied_at timestamp NOT NULL
)`
