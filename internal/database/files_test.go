package database_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/database"
)

// TestSQLiteFilesArePrivate: the SQLite file and its journal files are 0600 and the
// directory made for them 0700, whether the file is new or was left 0644 before.
func TestSQLiteFilesArePrivate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		existing os.FileMode // 0: no file before
	}{
		{name: "new file"},
		{name: "file left world-readable", existing: 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			path := filepath.Join(dir, "switchboard.db")
			if tt.existing != 0 {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, nil, tt.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.existing); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			db, err := database.Open(context.Background(), "sqlite:"+path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = database.Close(db) })
			// A write makes the -wal and -shm files.
			if err := db.Exec("CREATE TABLE t (x INTEGER)").Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Exec("INSERT INTO t VALUES (1)").Error; err != nil {
				t.Fatal(err)
			}
			want := map[string]os.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600}
			for p, mode := range want {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.Mode().Perm(); got != mode {
					t.Errorf("%s has mode %o, want %o", filepath.Base(p), got, mode)
				}
			}
		})
	}
}
