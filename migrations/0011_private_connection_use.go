package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// The structs below are migration 0011's frozen copies of the columns it adds. Never
// edit them: change the schema in a new migration with its own copies.

type agentUpdatedBy0011 struct {
	UpdatedBy string `gorm:"size:40;not null;default:''"`
}

func (agentUpdatedBy0011) TableName() string { return "agents" }

type apiKeyCreatedBy0011 struct {
	CreatedBy string `gorm:"size:40;not null;default:''"`
}

func (apiKeyCreatedBy0011) TableName() string { return "api_keys" }

// up0011PrivateConnectionUse records who saved each agent last (agents.updated_by) and
// who created each API key (api_keys.created_by): a private connection runs through an
// agent only while its owner is the agent's creator, its last editor and the creator
// of the calling key, so an admin's edit or key never acts through it.
//
// Existing rows are filled from the audit log, which names the user behind every agent
// change and agent key: an agent without such a record counts as last saved by its
// creator; an agent's key without one counts as created by nobody, so it keeps its
// shared tools and loses its private ones until its agent's owner creates a new key.
// A user's own key counts as created by its user.
func up0011PrivateConnectionUse(tx *gorm.DB) error {
	if err := tx.Migrator().AddColumn(&agentUpdatedBy0011{}, "UpdatedBy"); err != nil {
		return fmt.Errorf("add agents.updated_by: %w", err)
	}
	if err := tx.Migrator().AddColumn(&apiKeyCreatedBy0011{}, "CreatedBy"); err != nil {
		return fmt.Errorf("add api_keys.created_by: %w", err)
	}
	steps := []struct{ doing, sql string }{
		{"fill agents.updated_by", `UPDATE agents SET updated_by = COALESCE((
			SELECT substr(e.principal, 6) FROM audit_events e
			WHERE e.tenant_id = agents.tenant_id AND e.kind IN ('agent_created', 'agent_updated') AND e.principal LIKE 'user:%'
				AND e.detail IN ('created agent ' || agents.id, 'updated agent ' || agents.id)
			ORDER BY e.at DESC LIMIT 1), created_by)`},
		{"fill api_keys.created_by of users' keys", `UPDATE api_keys SET created_by = user_id WHERE agent_id IS NULL`},
		{"fill api_keys.created_by of agents' keys", `UPDATE api_keys SET created_by = COALESCE((
			SELECT substr(e.principal, 6) FROM audit_events e
			WHERE e.tenant_id = api_keys.tenant_id AND e.kind = 'key_created' AND e.principal LIKE 'user:%'
				AND e.detail = 'created key ' || api_keys.id || ' for agent ' || api_keys.agent_id
			ORDER BY e.at DESC LIMIT 1), '') WHERE agent_id IS NOT NULL`},
	}
	for _, s := range steps {
		if err := tx.Exec(s.sql).Error; err != nil {
			return fmt.Errorf("%s: %w", s.doing, err)
		}
	}
	return nil
}
