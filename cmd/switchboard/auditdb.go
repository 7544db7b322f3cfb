package main

import (
	"context"
	"fmt"
	"net/url"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/database"
)

// openAuditDB returns the database the audit writer writes to: db itself, or, with
// SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT=off, a pool of its own on the same PostgreSQL
// database whose sessions commit with synchronous_commit off. The returned func closes
// what it opened.
func openAuditDB(ctx context.Context, cfg config, db *gorm.DB) (*gorm.DB, func(), error) {
	if !cfg.AuditAsyncCommit {
		return db, func() {}, nil
	}
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, &configError{"SWITCHBOARD_DATABASE_URL", err.Error()}
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	adb, err := database.Open(ctx, u.String())
	if err != nil {
		return nil, nil, fmt.Errorf("open the audit log's database pool: %w", err)
	}
	return adb, func() { _ = database.Close(adb) }, nil
}
