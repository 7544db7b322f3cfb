package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// auditNode0025 is migration 0025's frozen copy of the column it adds. Never edit it.
type auditNode0025 struct {
	Node string `gorm:"size:64;not null;default:''"`
}

func (auditNode0025) TableName() string { return "audit_events" }

// up0025AuditInFlight adds audit_events.node: a tool call's row is written before its
// upstream request leaves (outcome in_flight) by the node that sends it, and completed
// when the answer comes; rows still in flight whose node is gone are marked
// outcome_unknown. The partial index finds those few rows without reading the rest.
func up0025AuditInFlight(tx *gorm.DB) error {
	if err := tx.Migrator().AddColumn(&auditNode0025{}, "Node"); err != nil {
		return fmt.Errorf("add audit_events.node: %w", err)
	}
	if err := tx.Exec(`CREATE INDEX idx_audit_in_flight ON audit_events (node) WHERE outcome = 'in_flight'`).Error; err != nil {
		return fmt.Errorf("create idx_audit_in_flight: %w", err)
	}
	return nil
}
