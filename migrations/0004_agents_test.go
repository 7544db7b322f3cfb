package migrations_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestAgentsMigration(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tables := []struct {
			name    string
			table   string
			columns []string
		}{
			{name: "agents", table: "agents", columns: []string{"id", "tenant_id", "name", "description", "instructions", "confirm", "approval", "tool_mode", "run_tools", "catalog", "created_by", "updated_by", "version", "created_at", "updated_at"}},
			{name: "agent tools", table: "agent_tools", columns: []string{"agent_id", "tool", "tenant_id", "connection_id", "position"}},
			{name: "tenant MCP settings", table: "tenant_mcp_settings", columns: []string{"tenant_id", "confirm", "approval", "tool_mode", "run_tools", "catalog", "updated_at"}},
		}
		for _, tt := range tables {
			t.Run(tt.name, func(t *testing.T) {
				types, err := db.Migrator().ColumnTypes(tt.table)
				if err != nil {
					t.Fatalf("columns of %s: %v", tt.table, err)
				}
				var got []string
				for _, c := range types {
					got = append(got, c.Name())
				}
				want := slices.Clone(tt.columns)
				slices.Sort(want)
				slices.Sort(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("columns of %s (-want +got):\n%s", tt.table, diff)
				}
			})
		}

		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_b', 'beta', 'Beta', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_a', 'ten_a', 'a@acme.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_b', 'ten_b', 'b@beta.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_a', 'ten_a', 'triage', 'usr_a', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_b', 'ten_b', 'triage', 'usr_b', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
			`INSERT INTO agent_tools (agent_id, tool, tenant_id, connection_id, position) VALUES ('agt_a', 'github_get_issue', 'ten_a', 'con_a', 0)`,
			`INSERT INTO tenant_mcp_settings (tenant_id, confirm, tool_mode, updated_at) VALUES ('ten_a', 'always', 'search', CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var agent struct {
			Description, Instructions, Confirm, ToolMode string
		}
		if err := db.Raw(`SELECT description, instructions, confirm, tool_mode FROM agents WHERE id = 'agt_a'`).Scan(&agent).Error; err != nil {
			t.Fatal(err)
		}
		if agent.Description != "" || agent.Instructions != "" || agent.Confirm != "" || agent.ToolMode != "" {
			t.Errorf("defaults of a new agent = %+v, want empty strings (inherit the tenant's)", agent)
		}
		refused := []struct {
			name string
			sql  string
		}{
			{name: "same name in one tenant", sql: `INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_c', 'ten_a', 'triage', 'usr_a', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`},
			{name: "same tool twice", sql: `INSERT INTO agent_tools (agent_id, tool, tenant_id, connection_id, position) VALUES ('agt_a', 'github_get_issue', 'ten_a', 'con_b', 1)`},
			{name: "tool of a missing agent", sql: `INSERT INTO agent_tools (agent_id, tool, tenant_id, connection_id, position) VALUES ('agt_x', 'github_get_issue', 'ten_a', 'con_a', 0)`},
			{name: "agent of a missing tenant", sql: `INSERT INTO agents (id, tenant_id, name, created_by, version, created_at, updated_at) VALUES ('agt_d', 'ten_x', 'x', 'usr_a', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`},
			{name: "second settings row", sql: `INSERT INTO tenant_mcp_settings (tenant_id, confirm, tool_mode, updated_at) VALUES ('ten_a', 'never', 'all', CURRENT_TIMESTAMP)`},
		}
		for _, tt := range refused {
			t.Run("refuses "+tt.name, func(t *testing.T) {
				if err := db.Exec(tt.sql).Error; err == nil {
					t.Errorf("%s was inserted", tt.sql)
				}
			})
		}
		if err := db.Exec(`DELETE FROM tenants WHERE id = 'ten_a'`).Error; err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			table string
			want  int64
		}{{"agents", 1}, {"agent_tools", 0}, {"tenant_mcp_settings", 0}} {
			var n int64
			if err := db.Table(tt.table).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("%s: %d rows after tenant ten_a was deleted, want %d (beta's only)", tt.table, n, tt.want)
			}
		}
	})
}
