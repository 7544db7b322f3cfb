package migrations_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/migrations"
)

// TestRunKindsBackfill checks migration 0026 on both databases: a run of a tool
// workflow_<name> recorded before is marked as that workflow's run and recorded under
// its run_flow__<name>, an agent's selected workflow_<name> becomes run_flow__<name>,
// a workflow's current version is kept and live, and nothing else changes.
func TestRunKindsBackfill(t *testing.T) {
	t.Parallel()
	testdb.EachEmpty(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		if err := migrations.RunTo(ctx, db, 24); err != nil {
			t.Fatal(err)
		}
		run := func(id, tool string) string {
			return `INSERT INTO runs (id, tenant_id, principal, principal_kind, user_id, tool, connection_id, origin, state, resumable, input_sealed, input_key_id, created_at, updated_at)
			 VALUES ('` + id + `', 'ten_a', 'user:usr_a', 'user', 'usr_a', '` + tool + `', '', 'async', 'completed', true, 'x', 'k1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`
		}
		for _, s := range []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_a', 'ten_a', 'a@acme.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_a', 'ten_a', 'a', 'usr_a', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO agent_tools (agent_id, tool, tenant_id, connection_id, position) VALUES ('agt_a', 'workflow_triage', 'ten_a', '', 0)`,
			`INSERT INTO agent_tools (agent_id, tool, tenant_id, connection_id, position) VALUES ('agt_a', 'notes_workflow_x', 'ten_a', 'con_1', 1)`,
			`INSERT INTO workflows (id, tenant_id, name, definition, source, created_by, updated_by, version, created_at, updated_at) VALUES ('wf_1', 'ten_a', 'triage', '{"name":"triage"}', 'x', 'user:usr_a', 'user:usr_a', 3, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			run("run_w", "workflow_triage"),
			run("run_t", "notes_workflow_x"),
		} {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := migrations.Run(ctx, db); err != nil {
			t.Fatal(err)
		}
		type runRow struct{ ID, Tool, Kind, Workflow string }
		var rs []runRow
		if err := db.Raw(`SELECT id, tool, kind, workflow FROM runs ORDER BY id`).Scan(&rs).Error; err != nil {
			t.Fatal(err)
		}
		want := []runRow{{ID: "run_t", Tool: "notes_workflow_x"}, {ID: "run_w", Tool: "run_flow__triage", Kind: "workflow", Workflow: "triage"}}
		if diff := cmp.Diff(want, rs); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		var tools []string
		if err := db.Raw(`SELECT tool FROM agent_tools ORDER BY position`).Scan(&tools).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"run_flow__triage", "notes_workflow_x"}, tools); diff != "" {
			t.Errorf("agent tools (-want +got):\n%s", diff)
		}
		type kept struct {
			WorkflowID string
			Version    int64
			Definition string
		}
		var versions []kept
		if err := db.Raw(`SELECT workflow_id, version, definition FROM workflow_versions`).Scan(&versions).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]kept{{"wf_1", 3, `{"name":"triage"}`}}, versions); diff != "" {
			t.Errorf("kept versions (-want +got):\n%s", diff)
		}
		var live int64
		if err := db.Raw(`SELECT live_version FROM workflows WHERE id = 'wf_1'`).Scan(&live).Error; err != nil || live != 3 {
			t.Errorf("live version = %d, %v; want 3", live, err)
		}
	})
}
