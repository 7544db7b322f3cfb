package usage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/migrations"
	"github.com/switchboard-hub/switchboard/usage"
)

// benchRows is how many audit rows BenchmarkOverview's tenant has: 30 days of calls,
// about 3.9 a second, all of one tenant (the worst case of a query that takes the
// tenant).
const benchRows = 10_000_000

// benchNow is the benchmark's clock; its rows span the 30 days before it.
var benchNow = time.Date(2026, 3, 31, 12, 30, 0, 0, time.UTC)

const benchTenant switchboard.TenantID = "ten_bench"

// benchCalls are the audit rows' columns as SQL over the row number i: 9 agents and a
// person, each calling 8 tools of its own on one of 5 connections (80 kinds of call an
// hour), one call in 50 failing, latencies spread from 0 to 2 s.
const benchCalls = `'agent:agt_' || (i % 10), 'tool_' || ((i % 10) * 8 + (i / 10) % 8), 'con_' || (i % 5), ` +
	`CASE WHEN i % 50 = 0 THEN 'upstream' ELSE 'ok' END, (i * 7919) % 2000000`

// BenchmarkOverview times Store.Overview over 24 hours, 7 days and 30 days for a tenant
// of 10 million audit rows, on SQLite and, when SWITCHBOARD_TEST_DATABASE_URL is set, on
// PostgreSQL. The SQLite database (rows and rollup) is made once and kept in the
// temporary directory for later runs; PostgreSQL's is made afresh.
func BenchmarkOverview(b *testing.B) {
	dbs := []struct {
		name string
		db   *gorm.DB
	}{{"sqlite", benchSQLite(b)}}
	if pg := testdb.OpenPostgres(b); pg != nil {
		fillPostgres(b, pg)
		dbs = append(dbs, struct {
			name string
			db   *gorm.DB
		}{"postgres", pg})
	}
	for _, d := range dbs {
		s := usage.NewStore(d.db)
		s.Now = func() time.Time { return benchNow }
		for _, r := range usage.Ranges {
			b.Run(d.name+"/"+string(r), func(b *testing.B) {
				for b.Loop() {
					o, err := s.Overview(context.Background(), benchTenant, usage.Query{Range: r})
					if err != nil {
						b.Fatal(err)
					}
					if o.Total.Calls == 0 || len(o.TopTools) != usage.TopTools {
						b.Fatalf("%s: %d calls, %d top tools", r, o.Total.Calls, len(o.TopTools))
					}
				}
			})
		}
	}
}

// benchSQLite opens the cached SQLite database, making it first if it is not there.
func benchSQLite(b *testing.B) *gorm.DB {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("switchboard-usage-bench-%d-v2.db", benchRows))
	if _, err := os.Stat(path); err != nil {
		b.Logf("making %s: %d audit rows and their rollup (a few minutes, once)", path, benchRows)
		tmp := path + ".making"
		for _, f := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
			_ = os.Remove(f)
		}
		// Made without a journal and with a large cache: it is rebuilt if anything fails.
		db, err := gorm.Open(sqlite.Open("file:"+tmp+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-524288)"), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if err := migrations.Run(ctx, db); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		addTenant(b, db, string(benchTenant))
		step := float64(30*24*time.Hour/time.Second) / benchRows
		from := benchNow.Add(-30 * 24 * time.Hour).Unix()
		// Statements of a million rows each, in time order; the time as the driver writes it.
		const chunk = 1_000_000
		for first := 0; first < benchRows; first += chunk {
			err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?) `+
				`INSERT INTO audit_events (id, tenant_id, at, kind, principal, tool, connection_id, outcome, latency_micros, key_id, args_hash, detail, node) `+
				`SELECT printf('aud_%016d', i), ?, strftime('%Y-%m-%d %H:%M:%f', ? + i * ?, 'unixepoch') || '+00:00', 'tool_call', `+benchCalls+`, '', '', '', '' FROM n`,
				first, min(first+chunk, benchRows)-1, benchTenant, from, step).Error
			if err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("%d rows written in %s", benchRows, time.Since(start).Round(time.Second))
		rollUp(b, db)
		if err := db.Exec("ANALYZE").Error; err != nil {
			b.Fatal(err)
		}
		if err := database.Close(db); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	db, err := database.Open(ctx, "sqlite:"+path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = database.Close(db) })
	return db
}

// fillPostgres writes the rows into a fresh PostgreSQL schema and rolls them up.
func fillPostgres(b *testing.B, db *gorm.DB) {
	b.Helper()
	start := time.Now()
	addTenant(b, db, string(benchTenant))
	step := float64(30*24*time.Hour/time.Second) / benchRows
	from := benchNow.Add(-30 * 24 * time.Hour).Unix()
	err := db.Exec(`INSERT INTO audit_events (id, tenant_id, at, kind, principal, tool, connection_id, outcome, latency_micros, key_id, args_hash, detail, node) `+
		`SELECT 'aud_' || lpad(i::text, 16, '0'), ?, to_timestamp(CAST(? AS double precision) + i * CAST(? AS double precision)), 'tool_call', `+benchCalls+`, '', '', '', '' FROM generate_series(CAST(0 AS bigint), CAST(? AS bigint)) AS i`,
		benchTenant, from, step, benchRows-1).Error
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Exec("ANALYZE audit_events").Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("postgres: %d rows written in %s", benchRows, time.Since(start).Round(time.Second))
	rollUp(b, db)
	if err := db.Exec("ANALYZE usage_hourly").Error; err != nil {
		b.Fatal(err)
	}
}

// rollUp fills usage_hourly from the rows, as the first pass of a node would.
func rollUp(b *testing.B, db *gorm.DB) {
	b.Helper()
	start := time.Now()
	r := usage.NewRollup(db, nil)
	r.Now = func() time.Time { return benchNow }
	if err := r.Pass(context.Background()); err != nil {
		b.Fatal(err)
	}
	var n int64
	db.Table("usage_hourly").Count(&n)
	b.Logf("rolled up into %d rows of usage_hourly in %s", n, time.Since(start).Round(time.Second))
}
