package telemetry_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// seedCounts stores connections and runs of two tenants, straight into the tables the
// counts read.
func seedCounts(t *testing.T, db *gorm.DB) {
	t.Helper()
	now := time.Now().UTC()
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := db.Exec(sql, args...).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, ten := range []string{"ten_a", "ten_b"} {
		exec(`INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)`, ten, ten[4:]+"-slug", ten, now)
	}
	conns := []struct{ id, tenant, provider, status string }{
		{"con_1", "ten_a", "github", "active"}, {"con_2", "ten_b", "github", "active"},
		{"con_3", "ten_a", "slack", "needs_reconnect"}, {"con_4", "ten_b", "github", "revoked"},
	}
	for _, c := range conns {
		exec(`INSERT INTO connections (id, tenant_id, owner_user_id, provider, auth_kind, account_id, account_label, scopes, shared, status, sealed, key_id, version, created_at, updated_at)
			VALUES (?, ?, 'usr_1', ?, 'api_key', ?, ?, '', false, ?, ?, 'k1', 1, ?, ?)`, c.id, c.tenant, c.provider, c.id, c.id, c.status, []byte{1}, now, now)
	}
	for _, id := range []string{"mcs_1", "mcs_2", "mcs_3"} {
		exec(`INSERT INTO mcp_sessions (id, tenant_id, principal_id, agent_id, protocol_version, client_info, capabilities, log_level, created_at)
			VALUES (?, 'ten_a', 'user:usr_1', '', '2025-06-18', '{}', '{}', '', ?)`, id, now)
	}
	for i, state := range []string{"working", "working", "completed", "input_required"} {
		exec(`INSERT INTO runs (id, tenant_id, principal, principal_kind, user_id, tool, connection_id, origin, state, resumable, input_sealed, input_key_id, created_at, updated_at)
			VALUES (?, ?, 'user:usr_1', 'user', 'usr_1', 'github_get_issue', 'con_1', 'mcp', ?, false, ?, 'k1', ?, ?)`, "run_"+string(rune('a'+i)), []string{"ten_a", "ten_b"}[i%2], state, []byte{1}, now, now)
	}
}

func TestCountsOnScrape(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		seedCounts(t, db)
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		m, err := telemetry.NewMetrics(reg)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ConnectionsByStatus(sqlDB, nil); err != nil {
			t.Fatal(err)
		}
		if err := m.RunsByState(sqlDB, nil); err != nil {
			t.Fatal(err)
		}
		if err := m.SessionsRecorded(sqlDB, nil); err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{
			`switchboard_connections{provider="github",status="active"}`:         2,
			`switchboard_connections{provider="github",status="revoked"}`:        1,
			`switchboard_connections{provider="slack",status="needs_reconnect"}`: 1,
			`switchboard_runs{state="working"}`:                                  2,
			`switchboard_runs{state="completed"}`:                                1,
			`switchboard_runs{state="input_required"}`:                           1,
			`switchboard_mcp_sessions_recorded`:                                  3,
		}
		got := telemetrytest.Samples(t, reg, "switchboard_")
		for k := range got {
			if _, ok := want[k]; !ok && k[:len("switchboard_connections")] != "switchboard_connections" && k[:len("switchboard_runs")] != "switchboard_runs" && k != "switchboard_mcp_sessions_recorded" {
				delete(got, k)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
		// A scrape within the interval answers from the last count: no query.
		if err := db.Exec(`UPDATE connections SET status = 'revoked'`).Error; err != nil {
			t.Fatal(err)
		}
		again := telemetrytest.Samples(t, reg, "switchboard_connections")
		if again[`switchboard_connections{provider="github",status="active"}`] != 2 {
			t.Errorf("second scrape counted again: %v", again)
		}
	})
}

func TestCountQueryFailureYieldsNothing(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`DROP TABLE runs`).Error; err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RunsByState(sqlDB, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := telemetrytest.Samples(t, reg, "switchboard_runs"); len(got) != 0 {
		t.Errorf("a failed count gave samples %v", got)
	}
}
