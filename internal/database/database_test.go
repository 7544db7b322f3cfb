package database_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/database"
)

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, want string
	}{
		{name: "empty", url: "", want: "no database URL"},
		{name: "unknown scheme", url: "mysql://root:hunter2@db/x", want: "unsupported URL scheme"},
		{name: "in-memory sqlite", url: "sqlite::memory:", want: "in-memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := database.Open(context.Background(), tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestOpenSQLiteSettings(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"sqlite:", ""} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := database.Open(ctx, prefix+filepath.Join(t.TempDir(), "sub", "x.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = database.Close(db) })
			if err := database.Ping(ctx, db); err != nil {
				t.Fatal(err)
			}
			pragmas := []struct {
				name string
				want string
			}{
				{name: "journal_mode", want: "wal"},
				{name: "foreign_keys", want: "1"},
				{name: "busy_timeout", want: "5000"},
				{name: "synchronous", want: "1"},        // NORMAL
				{name: "wal_autocheckpoint", want: "0"}, // the checkpointer's (checkpoint.go)
			}
			for _, p := range pragmas {
				var got string
				if err := db.Raw("PRAGMA " + p.name).Scan(&got).Error; err != nil {
					t.Fatal(err)
				}
				if got != p.want {
					t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
				}
			}
		})
	}
}

// TestSQLiteTimesAndTransactions checks the two driver settings the data depends on:
// times are written as "2006-01-02 15:04:05.999999999-07:00", which sorts as text and
// is what databases written by earlier builds hold (the driver's own default would be
// Go's time.String), and a transaction takes the write lock when it begins, so two
// read-then-write transactions never deadlock on upgrading their locks.
func TestSQLiteTimesAndTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openWith(t, "CREATE TABLE stamps (at DATETIME)")
	at := time.Date(2026, 11, 28, 13, 4, 5, 123456789, time.FixedZone("", 3600))
	if err := db.Exec("INSERT INTO stamps (at) VALUES (?)", at).Error; err != nil {
		t.Fatal(err)
	}
	// Bracketed, the stored text is not date-shaped, so the driver hands it over as is.
	var stored string
	if err := db.Raw("SELECT '[' || at || ']' FROM stamps").Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if want := "[2026-11-28 13:04:05.123456789+01:00]"; stored != want {
		t.Errorf("a time is stored as %q, want %q", stored, want)
	}
	var back time.Time
	if err := db.Raw("SELECT at FROM stamps").Scan(&back).Error; err != nil {
		t.Fatal(err)
	}
	if !back.Equal(at) {
		t.Errorf("the time reads back as %v, want %v", back, at)
	}

	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	first, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback() }()
	// The first transaction has only begun; an IMMEDIATE begin already holds the
	// write lock, so a write from another connection waits out busy_timeout. Here it
	// is given 50 ms and must fail as busy.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(short, "INSERT INTO stamps (at) VALUES (?)", at); err == nil {
		t.Error("a write beside a transaction that had only begun went through: transactions do not begin IMMEDIATE")
	}
}
