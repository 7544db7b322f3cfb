package database_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
