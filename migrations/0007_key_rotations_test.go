package migrations_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestKeyRotationsTable: key_rotations has its columns, and its unique index lets one
// rotation at a time be active while finished ones (active NULL) pile up.
func TestKeyRotationsTable(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		types, err := db.Migrator().ColumnTypes("key_rotations")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range types {
			got = append(got, c.Name())
		}
		slices.Sort(got)
		want := []string{"active", "failed", "finished_at", "id", "key_id", "resealed", "started_at"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
		steps := []struct {
			name    string
			sql     string
			wantErr bool
		}{
			{name: "a finished rotation", sql: `INSERT INTO key_rotations (id, key_id, active, started_at, finished_at, resealed, failed) VALUES ('rot_1', 'k1', NULL, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 3, 0)`},
			{name: "another finished one", sql: `INSERT INTO key_rotations (id, key_id, active, started_at, finished_at, resealed, failed) VALUES ('rot_2', 'k2', NULL, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 3, 0)`},
			{name: "an active one", sql: `INSERT INTO key_rotations (id, key_id, active, started_at, resealed, failed) VALUES ('rot_3', '', 1, CURRENT_TIMESTAMP, 0, 0)`},
			{name: "a second active one is refused", sql: `INSERT INTO key_rotations (id, key_id, active, started_at, resealed, failed) VALUES ('rot_4', '', 1, CURRENT_TIMESTAMP, 0, 0)`, wantErr: true},
			{name: "finishing the active one", sql: `UPDATE key_rotations SET active = NULL, finished_at = CURRENT_TIMESTAMP WHERE id = 'rot_3'`},
			{name: "then another may start", sql: `INSERT INTO key_rotations (id, key_id, active, started_at, resealed, failed) VALUES ('rot_5', '', 1, CURRENT_TIMESTAMP, 0, 0)`},
		}
		for _, s := range steps {
			err := db.Exec(s.sql).Error
			if (err != nil) != s.wantErr {
				t.Fatalf("%s: err = %v, want error %v", s.name, err, s.wantErr)
			}
		}
	})
}
