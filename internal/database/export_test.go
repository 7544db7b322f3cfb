package database

import (
	"testing"
	"time"

	"gorm.io/gorm"
)

// SetCheckpointing restarts db's checkpointer to run every every and truncate the log
// at restartAt pages.
func SetCheckpointing(t testing.TB, db *gorm.DB, every time.Duration, restartAt int) {
	t.Helper()
	pool, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := checkpointers.Load(pool)
	if !ok {
		t.Fatal("the database has no checkpointer")
	}
	old := v.(*checkpointer)
	old.close()
	if _, err := startCheckpointer(pool, old.dsn, old.log, every, restartAt); err != nil {
		t.Fatal(err)
	}
}
