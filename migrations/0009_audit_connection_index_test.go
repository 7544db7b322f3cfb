package migrations_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestAuditConnectionIndex(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		if !db.Migrator().HasIndex("audit_events", "idx_audit_tenant_connection_at") {
			t.Error("audit_events has no (tenant_id, connection_id, at) index")
		}
	})
}
