// Package database opens the hub's gorm database: SQLite (pure Go) by default, PostgreSQL
// in production, both tuned for the hub's load and with a logger that never prints SQL
// values (they may be sealed credentials or key hashes).
//
// Start from [Open], [Ping] and [Close].
package database

import (
	"context"
	"errors"
	"fmt"
	"io"

	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// Open connects to the database the URL names: "sqlite:PATH" or a plain file path for
// SQLite, "postgres://…" or "postgresql://…" for PostgreSQL. It does not migrate; run
// migrations.Run next.
func Open(ctx context.Context, rawURL string) (*gorm.DB, error) {
	switch {
	case rawURL == "":
		return nil, errors.New("open database: no database URL; set SWITCHBOARD_DATABASE_URL to sqlite:PATH or postgres://…")
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return openPostgres(ctx, rawURL)
	case strings.Contains(rawURL, "://"):
		return nil, fmt.Errorf("open database: unsupported URL scheme in %q; use sqlite:PATH or postgres://…", Redact(rawURL))
	default:
		return openSQLite(ctx, strings.TrimPrefix(rawURL, "sqlite:"))
	}
}

// Ping checks that the database answers, for readiness probes.
func Ping(ctx context.Context, db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// Close closes the database's connection pool.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	stopCheckpointer(sqlDB)
	return sqlDB.Close()
}

// config is the gorm configuration both dialects share: errors translated to
// gorm.ErrDuplicatedKey and friends, UTC timestamps at the microsecond precision
// PostgreSQL keeps (so a value read back equals the one written), and a logger that
// reports errors to w without SQL values.
func config(w io.Writer) *gorm.Config {
	return &gorm.Config{
		TranslateError:         true,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		Logger:                 newLogger(w),
	}
}

// openSQLite opens a SQLite file in WAL mode. Readers run in parallel with the one
// writer; transactions take the write lock when they begin (BEGIN IMMEDIATE), so two
// writers queue on busy_timeout instead of failing with "database is locked" half-way.
func openSQLite(ctx context.Context, path string) (*gorm.DB, error) {
	if path == "" {
		return nil, errors.New("open database: empty SQLite path")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file::memory:") {
		return nil, errors.New("open database: in-memory SQLite is not supported (each pooled connection would see its own database); use a file")
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open database: create directory %s: %w", dir, err)
		}
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// No commit checkpoints the log: the checkpointer does, beside them (checkpoint.go).
	q.Add("_pragma", "wal_autocheckpoint(0)")
	// Times as "2006-01-02 15:04:05.999999999-07:00", which sorts as text and is what
	// databases written before the driver was modernc.org/sqlite's hold.
	q.Set("_time_format", "sqlite")
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	db, err := gorm.Open(sqlite.Open(dsn), config(os.Stderr))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// Writes serialize on SQLite's lock whatever the pool size; a few connections let
	// reads proceed alongside the writer without many writers queueing on the lock.
	n := min(max(runtime.GOMAXPROCS(0), 2), 8)
	sqlDB.SetMaxOpenConns(n)
	sqlDB.SetMaxIdleConns(n)
	sqlDB.SetConnMaxIdleTime(0)
	sqlDB.SetConnMaxLifetime(0)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if _, err := startCheckpointer(sqlDB, dsn, os.Stderr, checkpointEvery, restartFrames); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, nil
}

// openPostgres opens a PostgreSQL pool through pgx.
func openPostgres(ctx context.Context, rawURL string) (*gorm.DB, error) {
	db, err := gorm.Open(postgres.Open(rawURL), config(os.Stderr))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", Redact(rawURL), err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", Redact(rawURL), err)
	}
	sqlDB.SetMaxOpenConns(25)
	sqlDB.SetMaxIdleConns(25)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	sqlDB.SetConnMaxLifetime(30 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", Redact(rawURL), err)
	}
	return db, nil
}

// Redact drops the password from a database URL so it can appear in errors and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// privateFiles creates the SQLite file 0600 when it does not exist, and takes group and
// other access away from it and its -wal and -shm files when it does (SQLite gives the
// journal files the database file's mode): they hold sealed credentials and key hashes.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open database: create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("open database: create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open database: stat %s: %w", p, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("open database: make %s private: %w", p, err)
			}
		}
	}
	return nil
}
