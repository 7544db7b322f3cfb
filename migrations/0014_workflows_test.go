package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestWorkflowTables checks migration 0014 on both databases: a workflow name is
// unique within its tenant only, and a run's step record is unique per step and item.
func TestWorkflowTables(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ok := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ta14', 'ta14', 'A', CURRENT_TIMESTAMP)`,
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('tb14', 'tb14', 'B', CURRENT_TIMESTAMP)`,
			`INSERT INTO workflows (id, tenant_id, name, definition, source, created_by, updated_by, created_at, updated_at) VALUES ('w1', 'ta14', 'triage', '{}', '{}', 'u', 'u', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO workflows (id, tenant_id, name, definition, source, created_by, updated_by, created_at, updated_at) VALUES ('w2', 'tb14', 'triage', '{}', '{}', 'u', 'u', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO workflow_steps (id, tenant_id, run_id, step, item, state, updated_at) VALUES ('s1', 'ta14', 'r1', 'fetch', -1, 'running', CURRENT_TIMESTAMP)`,
			`INSERT INTO workflow_steps (id, tenant_id, run_id, step, item, state, updated_at) VALUES ('s2', 'ta14', 'r1', 'fetch', 0, 'running', CURRENT_TIMESTAMP)`,
		}
		for _, s := range ok {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		refused := []string{
			`INSERT INTO workflows (id, tenant_id, name, definition, source, created_by, updated_by, created_at, updated_at) VALUES ('w3', 'ta14', 'triage', '{}', '{}', 'u', 'u', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO workflow_steps (id, tenant_id, run_id, step, item, state, updated_at) VALUES ('s3', 'ta14', 'r1', 'fetch', -1, 'running', CURRENT_TIMESTAMP)`,
		}
		for _, s := range refused {
			if err := db.Exec(s).Error; err == nil {
				t.Errorf("%s: accepted, want a unique violation", s)
			}
		}
	})
}
