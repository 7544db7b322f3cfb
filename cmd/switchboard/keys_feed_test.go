package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestKeysRotateTellsTheServers: `keys rotate` on a PostgreSQL database tells the
// running servers through the change feed, with the new key's id, so they drop the
// records and clients they cached under the old key.
func TestKeysRotateTellsTheServers(t *testing.T) {
	t.Parallel()
	testdb.Postgres(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		dsn := testdb.DSN(t, db)
		e := env(map[string]string{"SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"), "SWITCHBOARD_DATABASE_URL": dsn})
		seedConnections(t, e)
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		server, closeFeed, err := events.Open(context.Background(), "postgres", sqlDB, dsn, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(closeFeed)
		heard := make(chan events.Event, 8)
		server.Subscribe(func(ev events.Event) { heard <- ev })

		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"keys", "rotate"}, e, &stdout, &stderr); code != exitOK {
			t.Fatalf("keys rotate: exit %d: %s", code, stderr.String())
		}
		m := regexp.MustCompile(`(?m)^Rotated to key (\S+);`).FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("output:\n%s", stdout.String())
		}
		select {
		case ev := <-heard:
			if ev.Kind != events.KeyringRotated || ev.ID != m[1] || ev.Tenant != "" {
				t.Errorf("the servers heard %+v, want keyring.rotated with key %s", ev, m[1])
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the servers heard nothing of the rotation")
		}
	})
}
