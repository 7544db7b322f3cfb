package migrations_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestRunsTable(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		types, err := db.Migrator().ColumnTypes("runs")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range types {
			got = append(got, c.Name())
		}
		want := []string{
			"id", "tenant_id", "principal", "principal_kind", "user_id", "agent_id", "key_id", "role",
			"tool", "connection_id", "origin", "state", "resumable", "input_sealed", "input_key_id",
			"output_sealed", "output_key_id", "error_code", "error_message",
			"elicitation_message", "elicitation_expires_at", "elicitation_action",
			"lease_owner", "lease_until", "attempts", "created_at", "updated_at", "started_at", "finished_at",
			"kind", "workflow", "workflow_version", "context", "input_requests_sealed", "input_requests_key_id",
		}
		slices.Sort(want)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("columns of runs (-want +got):\n%s", diff)
		}
		for _, idx := range []string{"idx_runs_tenant_principal", "idx_runs_state_lease"} {
			if !db.Migrator().HasIndex("runs", idx) {
				t.Errorf("runs has no index %s", idx)
			}
		}
		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_r', 'runs', 'Runs', CURRENT_TIMESTAMP)`,
			`INSERT INTO runs (id, tenant_id, principal, principal_kind, user_id, tool, connection_id, origin, state, resumable, input_sealed, input_key_id, created_at, updated_at)
			 VALUES ('run_1', 'ten_r', 'user:usr_1', 'user', 'usr_1', 'notes_get_note', 'con_1', 'async', 'working', true, 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := db.Exec(`INSERT INTO runs (id, tenant_id, principal, principal_kind, user_id, tool, connection_id, origin, state, resumable, input_sealed, input_key_id, created_at, updated_at)
			 VALUES ('run_2', 'ten_missing', 'user:usr_1', 'user', 'usr_1', 'notes_get_note', 'con_1', 'async', 'working', true, 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`).Error; err == nil {
			t.Error("a run of a missing tenant was inserted")
		}
		if err := db.Exec(`DELETE FROM tenants WHERE id = 'ten_r'`).Error; err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := db.Table("runs").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d runs left after their tenant was deleted", n)
		}
	})
}
