package migrations_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/migrations"
)

func TestRunCreatesTablesAndIsIdempotent(t *testing.T) {
	t.Parallel()
	testdb.EachEmpty(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		for i := range 2 {
			if err := migrations.Run(ctx, db); err != nil {
				t.Fatalf("run %d: %v", i+1, err)
			}
		}
		got, err := migrations.Applied(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(migrations.Versions(), got); diff != "" {
			t.Errorf("applied versions (-want +got):\n%s", diff)
		}
		tests := []struct {
			name    string
			table   string
			columns []string
		}{
			{name: "tenants", table: "tenants", columns: []string{"id", "slug", "name", "created_at"}},
			{name: "users", table: "users", columns: []string{"id", "tenant_id", "email", "role", "password_hash", "created_at"}},
			{name: "api keys", table: "api_keys", columns: []string{"id", "tenant_id", "user_id", "agent_id", "name", "prefix", "hash", "operator", "scopes", "created_at", "last_used_at", "revoked_at", "created_by", "expires_at"}},
			{name: "connections", table: "connections", columns: []string{"id", "tenant_id", "owner_user_id", "provider", "auth_kind", "account_id", "account_label", "scopes", "shared", "status", "sealed", "key_id", "meta", "expires_at", "refreshed_at", "version", "created_at", "updated_at", "refreshable", "last_refresh_error", "refresh_claim", "refresh_claim_until", "rate_per_second", "rate_burst"}},
			{name: "audit events", table: "audit_events", columns: []string{"id", "tenant_id", "at", "kind", "principal", "key_id", "tool", "connection_id", "outcome", "upstream_status", "latency_micros", "args_hash", "detail", "node"}},
			{name: "mcp stream events", table: "mcp_stream_events", columns: []string{"id", "tenant_id", "session_id", "stream", "seq", "message_sealed", "message_key_id", "message_bytes", "last", "created_at"}},
			{name: "schema migrations", table: "schema_migrations", columns: []string{"version", "name", "applied_at"}},
		}
		for _, tt := range tests {
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
		if !db.Migrator().HasIndex("audit_events", "idx_audit_tenant_at") {
			t.Error("audit_events has no (tenant_id, at) index")
		}
	})
}

func TestForeignKeysCascadeFromTenants(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		steps := []string{
			`INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_a', 'acme', 'Acme', CURRENT_TIMESTAMP)`,
			`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_a', 'ten_a', 'a@acme.test', 'owner', CURRENT_TIMESTAMP)`,
			`INSERT INTO api_keys (id, tenant_id, user_id, name, prefix, hash, created_at) VALUES ('key_a', 'ten_a', 'usr_a', 'k', 'p1', 'h', CURRENT_TIMESTAMP)`,
		}
		for _, s := range steps {
			if err := db.Exec(s).Error; err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		if err := db.Exec(`INSERT INTO users (id, tenant_id, email, role, created_at) VALUES ('usr_b', 'ten_missing', 'b@x.test', 'owner', CURRENT_TIMESTAMP)`).Error; err == nil {
			t.Error("a user of a missing tenant was inserted; foreign keys are off")
		}
		if err := db.Exec(`DELETE FROM tenants WHERE id = 'ten_a'`).Error; err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"users", "api_keys"} {
			var n int64
			if err := db.Table(table).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s: %d rows left after the tenant was deleted", table, n)
			}
		}
	})
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	testdb.EachEmpty(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		const n = 4
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = migrations.Run(context.Background(), db) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		}
		got, err := migrations.Applied(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(migrations.Versions(), got); diff != "" {
			t.Errorf("applied versions (-want +got):\n%s", diff)
		}
	})
}

func TestVersionsIncrease(t *testing.T) {
	t.Parallel()
	prev := 0
	for i, v := range migrations.Versions() {
		if v <= prev {
			t.Fatalf("migration %d has version %d after %d; versions must only increase", i+1, v, prev)
		}
		prev = v
	}
}
