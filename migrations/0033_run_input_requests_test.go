package migrations_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/migrations"
)

// TestRunInputRequestsColumns checks migration 0033 on both databases: a run recorded
// before it has no input requests (no ciphertext, no key), and a run may record some.
func TestRunInputRequestsColumns(t *testing.T) {
	t.Parallel()
	testdb.EachEmpty(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		if err := migrations.RunTo(ctx, db, 32); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
			`INSERT INTO runs (id, tenant_id, principal, principal_kind, user_id, tool, connection_id, origin, state, resumable, input_sealed, input_key_id, created_at, updated_at)
			 VALUES ('run_old', 'ten_a', 'user:usr_a', 'user', 'usr_a', 'notes_list', '', 'task', 'working', true, 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		} {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := migrations.Run(ctx, db); err != nil {
			t.Fatal(err)
		}
		var old struct {
			InputRequestsSealed []byte
			InputRequestsKeyID  string
		}
		if err := db.Raw(`SELECT input_requests_sealed, input_requests_key_id FROM runs WHERE id = 'run_old'`).Scan(&old).Error; err != nil {
			t.Fatal(err)
		}
		if old.InputRequestsSealed != nil || old.InputRequestsKeyID != "" {
			t.Errorf("input requests of a run recorded before = %q, %q; want none", old.InputRequestsSealed, old.InputRequestsKeyID)
		}
		if err := db.Exec(`UPDATE runs SET input_requests_sealed = ?, input_requests_key_id = 'k2' WHERE id = 'run_old'`, []byte("sealed")).Error; err != nil {
			t.Errorf("record input requests: %v", err)
		}
	})
}
