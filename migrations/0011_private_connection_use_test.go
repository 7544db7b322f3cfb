package migrations_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/migrations"
)

// TestPrivateConnectionUseBackfill checks migration 0011 on both databases: an
// agent's last editor and an agent key's creator come from the audit log (the latest
// change, by a user); without a record, an agent counts as saved by its creator and an
// agent's key as created by nobody, and a user's key as created by its user.
func TestPrivateConnectionUseBackfill(t *testing.T) {
	t.Parallel()
	testdb.EachEmpty(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		if err := migrations.RunTo(ctx, db, 10); err != nil {
			t.Fatal(err)
		}
		audit := func(id, tenant, at, kind, principal, detail string) string {
			return `INSERT INTO audit_events (id, tenant_id, at, kind, principal, outcome, detail) VALUES ('` + id + `', '` + tenant + `', '` + at + `', '` + kind + `', '` + principal + `', 'ok', '` + detail + `')`
		}
		before := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_b', 'beta', 'Beta', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_owner', 'ten_a', 'o@acme.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_admin', 'ten_a', 'a@acme.test', 'admin', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_b', 'ten_b', 'b@beta.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_edited', 'ten_a', 'edited', 'usr_owner', 3, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_quiet', 'ten_a', 'quiet', 'usr_owner', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO api_keys (id, tenant_id, user_id, agent_id, name, prefix, hash, created_at) VALUES ('key_user', 'ten_a', 'usr_admin', NULL, 'mine', 'p1', 'h', CURRENT_TIMESTAMP)`,
			`INSERT INTO api_keys (id, tenant_id, user_id, agent_id, name, prefix, hash, created_at) VALUES ('key_by_admin', 'ten_a', 'usr_owner', 'agt_edited', 'bot', 'p2', 'h', CURRENT_TIMESTAMP)`,
			`INSERT INTO api_keys (id, tenant_id, user_id, agent_id, name, prefix, hash, created_at) VALUES ('key_by_owner', 'ten_a', 'usr_owner', 'agt_edited', 'bot', 'p3', 'h', CURRENT_TIMESTAMP)`,
			`INSERT INTO api_keys (id, tenant_id, user_id, agent_id, name, prefix, hash, created_at) VALUES ('key_unknown', 'ten_a', 'usr_owner', 'agt_quiet', 'bot', 'p4', 'h', CURRENT_TIMESTAMP)`,
			audit("aud_1", "ten_a", "2026-01-01 10:00:00", "agent_created", "user:usr_owner", "created agent agt_edited"),
			audit("aud_2", "ten_a", "2026-01-02 10:00:00", "agent_updated", "user:usr_owner", "updated agent agt_edited"),
			audit("aud_3", "ten_a", "2026-01-03 10:00:00", "agent_updated", "user:usr_admin", "updated agent agt_edited"),
			audit("aud_4", "ten_a", "2026-01-03 11:00:00", "key_created", "user:usr_admin", "created key key_by_admin for agent agt_edited"),
			audit("aud_5", "ten_a", "2026-01-03 12:00:00", "key_created", "user:usr_owner", "created key key_by_owner for agent agt_edited"),
			// Another tenant's record of the same ids changes nothing here.
			audit("aud_6", "ten_b", "2026-01-04 10:00:00", "agent_updated", "user:usr_b", "updated agent agt_quiet"),
			audit("aud_7", "ten_b", "2026-01-04 10:00:00", "key_created", "user:usr_b", "created key key_unknown for agent agt_quiet"),
		}
		for _, s := range before {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := migrations.Run(ctx, db); err != nil {
			t.Fatal(err)
		}
		type row struct{ ID, By string }
		var agents, keys []row
		if err := db.Raw(`SELECT id, updated_by AS by FROM agents ORDER BY id`).Scan(&agents).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Raw(`SELECT id, created_by AS by FROM api_keys ORDER BY id`).Scan(&keys).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]row{{"agt_edited", "usr_admin"}, {"agt_quiet", "usr_owner"}}, agents); diff != "" {
			t.Errorf("agents.updated_by (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]row{{"key_by_admin", "usr_admin"}, {"key_by_owner", "usr_owner"}, {"key_unknown", ""}, {"key_user", "usr_admin"}}, keys); diff != "" {
			t.Errorf("api_keys.created_by (-want +got):\n%s", diff)
		}
	})
}
