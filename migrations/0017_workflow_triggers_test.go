package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestWorkflowFirings checks migration 0017 on both databases: workflows are not
// scheduled unless set, and one firing of a trigger is recorded once.
func TestWorkflowFirings(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, s := range []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ta17', 'ta17', 'A', CURRENT_TIMESTAMP)`,
			`INSERT INTO workflows (id, tenant_id, name, definition, source, created_by, updated_by, created_at, updated_at) VALUES ('w17', 'ta17', 'n', '{}', '{}', 'u', 'u', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO workflow_firings (id, tenant_id, workflow_id, trigger, fire_at, created_at) VALUES ('f1', 'ta17', 'w17', 'schedule:0', '2026-01-01 10:05:00', CURRENT_TIMESTAMP)`,
		} {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var scheduled bool
		if err := db.Raw(`SELECT scheduled FROM workflows WHERE id = 'w17'`).Scan(&scheduled).Error; err != nil || scheduled {
			t.Fatalf("scheduled = %v, %v; want false", scheduled, err)
		}
		if err := db.Exec(`INSERT INTO workflow_firings (id, tenant_id, workflow_id, trigger, fire_at, created_at) VALUES ('f2', 'ta17', 'w17', 'schedule:0', '2026-01-01 10:05:00', CURRENT_TIMESTAMP)`).Error; err == nil {
			t.Fatal("a firing was recorded twice")
		}
	})
}
