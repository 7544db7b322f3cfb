package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// up0009AuditConnectionIndex indexes audit events by (tenant, connection, time): the
// connections list shows each connection's last use, which otherwise scans the tenant's
// whole audit history for a connection never used.
func up0009AuditConnectionIndex(tx *gorm.DB) error {
	if err := tx.Exec(`CREATE INDEX idx_audit_tenant_connection_at ON audit_events (tenant_id, connection_id, at)`).Error; err != nil {
		return fmt.Errorf("create idx_audit_tenant_connection_at: %w", err)
	}
	return nil
}
