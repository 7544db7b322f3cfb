package database_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// openWAL opens a SQLite database with a table to write to, and returns it with the
// path of its write-ahead log.
func openWAL(t *testing.T) (*gorm.DB, string) {
	t.Helper()
	db, path := openWith(t, "CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)")
	return db, path + "-wal"
}

// openWith opens a fresh SQLite database, closed when t ends, runs ddl on it, and
// returns it with its file's path.
func openWith(t *testing.T, ddl string) (*gorm.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := database.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	if err := db.Exec(ddl).Error; err != nil {
		t.Fatal(err)
	}
	return db, path
}

// commit writes n rows, each in a transaction of its own (each adds a page to the log).
func commit(t *testing.T, db *gorm.DB, n int) {
	t.Helper()
	for i := range n {
		if err := db.Exec("INSERT INTO rows (body) VALUES (?)", fmt.Sprintf("row %d", i)).Error; err != nil {
			t.Fatal(err)
		}
	}
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestCommitsDoNotCheckpoint: a commit never copies the log into the database file
// (SQLite's default, once the log holds 1,000 pages, made the commit that crossed it
// wait for two fsyncs and the copying): with the checkpointer held back, 1,500 commits
// leave 1,500 pages in the log, where SQLite's own checkpoints would have restarted it
// at 1,000.
func TestCommitsDoNotCheckpoint(t *testing.T) {
	t.Parallel()
	db, wal := openWAL(t)
	database.SetCheckpointing(t, db, time.Hour, 1<<30)
	const n = 1500
	commit(t, db, n)
	if got, want := walSize(t, wal), int64(n*4096); got < want {
		t.Errorf("log after %d commits: %d bytes, want at least %d (a page each): a commit checkpointed it", n, got, want)
	}
	var count int
	if err := db.Raw("SELECT count(*) FROM rows").Scan(&count).Error; err != nil || count != n {
		t.Fatalf("rows: %d, %v; want %d", count, err, n)
	}
}

// TestCheckpointerRestartsTheLog: beside the commits, the checkpointer copies the log
// into the database file and, once it holds its bound of pages, restarts it: the
// commits after write it from its start again, and the file does not grow.
func TestCheckpointerRestartsTheLog(t *testing.T) {
	t.Parallel()
	db, wal := openWAL(t)
	database.SetCheckpointing(t, db, time.Hour, 64) // held back while the log fills
	commit(t, db, 500)
	full := walSize(t, wal)
	database.SetCheckpointing(t, db, 5*time.Millisecond, 64)
	testwait.Until(t, "the checkpointer to restart the log", func() bool { return database.Restarts(t, db) > 0 })
	database.SetCheckpointing(t, db, time.Hour, 64)
	commit(t, db, 500)
	// Restarted, the log holds the second 500 commits' frames from its start: about the
	// first 500's (a frame or two more as the table grows). Not restarted, it would hold
	// both, twice that.
	if got := walSize(t, wal); got > full+full/2 {
		t.Errorf("log after 500 more commits: %d bytes, against %d after the first 500: it was not restarted", got, full)
	}
	var count int
	if err := db.Raw("SELECT count(*) FROM rows").Scan(&count).Error; err != nil || count != 1000 {
		t.Fatalf("rows: %d, %v; want 1000", count, err)
	}
}

// TestWritersAtTheGateAreNotCutIn: the log is restarted between a frequent writer's
// writes, never while one holds the write gate: the checkpointer waits at the gate
// (where the writer, once out, lets it in at once) rather than making the writer wait
// in SQLite's busy handler, which sleeps between tries.
func TestWritersAtTheGateAreNotCutIn(t *testing.T) {
	t.Parallel()
	db, _ := openWAL(t)
	database.SetCheckpointing(t, db, time.Hour, 64)
	commit(t, db, 500)
	gate := database.WriteGate(db)
	gate.Enter()
	database.SetCheckpointing(t, db, 5*time.Millisecond, 64)
	testwait.Until(t, "the checkpointer to wait at the gate", func() bool { return database.RestartsGated(t, db) > 0 })
	if n := database.Restarts(t, db); n != 0 {
		t.Errorf("the log was restarted %d times while a writer held the gate", n)
	}
	gate.Leave()
	testwait.Until(t, "the checkpointer to restart the log once the gate is free", func() bool { return database.Restarts(t, db) > 0 })
}
