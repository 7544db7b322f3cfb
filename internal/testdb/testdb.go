// Package testdb gives tests a fresh, migrated database: a SQLite file always, and a
// PostgreSQL schema of its own when SWITCHBOARD_TEST_DATABASE_URL is set.
//
// Start from [Each] (SQLite, and PostgreSQL when set), [Postgres] and [SQLite].
package testdb

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/notrun"
	"github.com/switchboard-hub/switchboard/migrations"
)

// EnvPostgresURL names the environment variable that, when set, makes Each also run
// its function against PostgreSQL.
const EnvPostgresURL = "SWITCHBOARD_TEST_DATABASE_URL"

// Each runs fn as the subtest "sqlite" on a fresh migrated SQLite file and, when
// SWITCHBOARD_TEST_DATABASE_URL is set, as the subtest "postgres" on a fresh migrated
// schema of that database. fn may call t.Parallel.
func Each(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	each(t, true, fn)
}

// Postgres runs fn as the subtest "postgres", on a fresh migrated schema, when
// SWITCHBOARD_TEST_DATABASE_URL is set: for what only PostgreSQL has (LISTEN/NOTIFY,
// backends to terminate), which Each's SQLite half cannot exercise.
func Postgres(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	if base := os.Getenv(EnvPostgresURL); base != "" {
		t.Run("postgres", func(t *testing.T) {
			fn(t, openPostgres(t, base, true))
		})
		return
	}
	notrun.Note(t, postgresNotRun)
}

// postgresNotRun is what a test without SWITCHBOARD_TEST_DATABASE_URL logs, and its
// package's summary counts (see notrun).
const postgresNotRun = "PostgreSQL (" + EnvPostgresURL + " is not set; SQLite only)"

// OpenPostgres returns a fresh migrated schema of the database that
// SWITCHBOARD_TEST_DATABASE_URL names, dropped when tb ends; nil when it is not set
// (for benchmarks, which measure PostgreSQL only where there is one).
func OpenPostgres(tb testing.TB) *gorm.DB {
	tb.Helper()
	base := os.Getenv(EnvPostgresURL)
	if base == "" {
		return nil
	}
	return openPostgres(tb, base, true)
}

// EachEmpty is Each without migrations: the database or schema is empty, for tests of
// the migrations themselves.
func EachEmpty(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	each(t, false, fn)
}

func each(t *testing.T, migrate bool, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, openSQLite(t, migrate))
	})
	if base := os.Getenv(EnvPostgresURL); base != "" {
		t.Run("postgres", func(t *testing.T) {
			fn(t, openPostgres(t, base, migrate))
		})
		return
	}
	notrun.Note(t, postgresNotRun)
}

// SQLite returns a fresh migrated SQLite database in a temporary file, closed when the
// test ends.
func SQLite(t testing.TB) *gorm.DB {
	t.Helper()
	return openSQLite(t, true)
}

// SQLitePath returns the file a SQLite database returned by this package lives in.
func SQLitePath(t testing.TB, db *gorm.DB) string {
	t.Helper()
	var rows []struct {
		Seq  int
		Name string
		File string
	}
	if err := db.Raw("PRAGMA database_list").Scan(&rows).Error; err != nil {
		t.Fatalf("database_list: %v", err)
	}
	for _, r := range rows {
		if r.Name == "main" {
			return r.File
		}
	}
	t.Fatal("no main database")
	return ""
}

func openSQLite(t testing.TB, migrate bool) *gorm.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	db, err := database.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	if migrate {
		if err := migrations.Run(context.Background(), db); err != nil {
			t.Fatalf("migrate sqlite: %v", err)
		}
	}
	return db
}

// openPostgres creates a schema of its own, connects with search_path set to it, and
// drops it when the test ends.
func openPostgres(t testing.TB, base string, migrate bool) *gorm.DB {
	t.Helper()
	ctx := context.Background()
	admin, err := database.Open(ctx, base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	if sqlDB, err := admin.DB(); err == nil {
		sqlDB.SetMaxOpenConns(1)
		shareServer(sqlDB)
	}
	schema := "t_" + switchboard.RandomToken(10)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		_ = database.Close(admin)
		t.Fatalf("create schema: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgresURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := database.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("open postgres schema: %v", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatalf("postgres pool: %v", err)
	}
	sqlDB.SetMaxOpenConns(8)
	shareServer(sqlDB)
	t.Cleanup(func() {
		_ = database.Close(db)
		if err := admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error; err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		_ = database.Close(admin)
	})
	if migrate {
		if err := migrations.Run(ctx, db); err != nil {
			t.Fatalf("migrate postgres: %v", err)
		}
	}
	return db
}

// Reopen returns a second, independent connection pool on the database db uses (the
// same SQLite file, or the same PostgreSQL schema), as another process would have;
// it is closed when the test ends.
func Reopen(t testing.TB, db *gorm.DB) *gorm.DB {
	t.Helper()
	dsn := DSN(t, db)
	other, err := database.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("reopen database: %v", err)
	}
	if sqlDB, err := other.DB(); err == nil && db.Dialector.Name() == "postgres" {
		sqlDB.SetMaxOpenConns(8)
		shareServer(sqlDB)
	}
	t.Cleanup(func() { _ = database.Close(other) })
	return other
}

// DSN returns the URL of the database db uses: "sqlite:PATH", or the PostgreSQL URL
// with search_path set to db's schema.
func DSN(t testing.TB, db *gorm.DB) string {
	t.Helper()
	if db.Dialector.Name() == "postgres" {
		var schema string
		if err := db.Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
			t.Fatalf("current schema: %v", err)
		}
		u, err := url.Parse(os.Getenv(EnvPostgresURL))
		if err != nil {
			t.Fatalf("parse %s: %v", EnvPostgresURL, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return "sqlite:" + SQLitePath(t, db)
}

// shareServer makes a test's pool give its idle connections back soon: many parallel
// tests share one PostgreSQL server (100 connections by default), and a test paused by
// t.Parallel after opening its schema must not hold connections while it waits.
func shareServer(sqlDB *sql.DB) {
	sqlDB.SetMaxIdleConns(2)
	sqlDB.SetConnMaxIdleTime(500 * time.Millisecond)
}
