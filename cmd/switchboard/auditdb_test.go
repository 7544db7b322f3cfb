package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestAuditSynchronousCommitSetting: off is refused on SQLite naming the variable, and
// anything but on or off is refused.
func TestAuditSynchronousCommitSetting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ db, value, wantErr string }{
		{db: "postgres://sb@db:5432/sb", value: "off"},
		{db: "postgres://sb@db:5432/sb", value: "on"},
		{db: "sqlite:/tmp/sb.db", value: "off", wantErr: "PostgreSQL only"},
		{db: "postgres://sb@db:5432/sb", value: "async", wantErr: "want on or off"},
	} {
		cfg, err := loadConfig(func(k string) string {
			switch k {
			case "SWITCHBOARD_DATABASE_URL":
				return tt.db
			case "SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT":
				return tt.value
			}
			return ""
		})
		var ce *configError
		switch {
		case tt.wantErr == "" && (err != nil || cfg.AuditAsyncCommit != (tt.value == "off")):
			t.Errorf("%s on %s: %+v, %v", tt.value, tt.db, cfg.AuditAsyncCommit, err)
		case tt.wantErr != "" && (!errors.As(err, &ce) || ce.Name != "SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT" || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s on %s: error %v, want one naming the variable saying %q", tt.value, tt.db, err, tt.wantErr)
		}
	}
}

// TestAuditDBCommitsAsynchronously: with the setting off, the audit writer's pool
// commits with synchronous_commit off on the same database, while the hub's own pool
// keeps it on; without it, the audit writer uses the hub's pool.
func TestAuditDBCommitsAsynchronously(t *testing.T) {
	testdb.Postgres(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		dsn := testdb.DSN(t, db)
		same, closeSame, err := openAuditDB(ctx, config{DatabaseURL: dsn}, db)
		if err != nil {
			t.Fatal(err)
		}
		closeSame()
		if same != db {
			t.Error("without the setting the audit writer got a pool of its own")
		}
		adb, closeAudit, err := openAuditDB(ctx, config{DatabaseURL: dsn, AuditAsyncCommit: true}, db)
		if err != nil {
			t.Fatal(err)
		}
		defer closeAudit()
		show := func(d *gorm.DB) string {
			var v string
			if err := d.Raw("SHOW synchronous_commit").Scan(&v).Error; err != nil {
				t.Fatal(err)
			}
			return v
		}
		if got := show(adb); got != "off" {
			t.Errorf("the audit pool's synchronous_commit = %q, want off", got)
		}
		if got := show(db); got != "on" {
			t.Errorf("the hub's pool's synchronous_commit = %q, want on", got)
		}
		var a, b string
		if err := adb.Raw("SELECT current_database() || '.' || current_schema()").Scan(&a).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Raw("SELECT current_database() || '.' || current_schema()").Scan(&b).Error; err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("the audit pool writes to %s, the hub reads %s", a, b)
		}
	})
}
