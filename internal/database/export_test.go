package database

import (
	"testing"
	"time"

	"gorm.io/gorm"
)

// SetCheckpointing restarts db's checkpointer to run every every and restart the log
// at restartAt pages.
func SetCheckpointing(t testing.TB, db *gorm.DB, every time.Duration, restartAt int) {
	t.Helper()
	old := checkpointerOf(t, db)
	// The new one takes the old one's place, and its gate, before the old one stops.
	if _, err := startCheckpointer(old.pool, old.dsn, old.log, every, restartAt); err != nil {
		t.Fatal(err)
	}
	old.close()
}

// RestartsGated is how many times db's checkpointer waited for a writer at the gate
// before it restarted the log.
func RestartsGated(t testing.TB, db *gorm.DB) int64 {
	t.Helper()
	return checkpointerOf(t, db).gated.Load()
}

// Restarts is how many times db's checkpointer restarted the log.
func Restarts(t testing.TB, db *gorm.DB) int64 {
	t.Helper()
	return checkpointerOf(t, db).restarts.Load()
}

func checkpointerOf(t testing.TB, db *gorm.DB) *checkpointer {
	t.Helper()
	pool, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := checkpointers.Load(pool)
	if !ok {
		t.Fatal("the database has no checkpointer")
	}
	return v.(*checkpointer)
}
