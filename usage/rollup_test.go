package usage_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/usage"
)

// addTenant inserts a bare tenant row, which audit events and usage rows reference.
func addTenant(t testing.TB, db *gorm.DB, id string) switchboard.TenantID {
	t.Helper()
	if err := db.Exec("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)", id, id, id, time.Now().UTC()).Error; err != nil {
		t.Fatalf("add tenant: %v", err)
	}
	return switchboard.TenantID(id)
}

// call is an audit row of a tool call.
func call(tenant switchboard.TenantID, at time.Time, principal, conn, tool, outcome string, latency time.Duration) audit.Event {
	return audit.Event{
		ID: switchboard.NewOrderedID("aud", at), TenantID: tenant, At: at, Kind: audit.KindToolCall, Principal: principal,
		ConnectionID: conn, Tool: tool, Outcome: outcome, LatencyMicros: latency.Microseconds(),
	}
}

func insert(t testing.TB, db *gorm.DB, events ...audit.Event) {
	t.Helper()
	if err := db.CreateInBatches(events, 500).Error; err != nil {
		t.Fatalf("insert audit rows: %v", err)
	}
}

// at is a fixed clock: 2026-03-10 14:30 UTC.
var at = time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)

func clock(t *time.Time) func() time.Time { return func() time.Time { return *t } }

func TestRollupCountsCallsErrorsAndLatency(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		a := addTenant(t, db, "ten_a")
		b := addTenant(t, db, "ten_b")
		hour := at.Truncate(time.Hour)
		running := call(a, hour.Add(5*time.Minute), "agent:agt_1", "con_1", "github_get_issue", audit.OutcomeInFlight, 0)
		insert(t, db,
			call(a, hour.Add(1*time.Minute), "agent:agt_1", "con_1", "github_get_issue", "ok", 3*time.Millisecond),
			call(a, hour.Add(2*time.Minute), "agent:agt_1", "con_1", "github_get_issue", "ok", 40*time.Millisecond),
			call(a, hour.Add(3*time.Minute), "agent:agt_1", "con_1", "github_get_issue", "upstream", 700*time.Millisecond),
			call(a, hour.Add(4*time.Minute), "agent:agt_1", "con_1", "github_get_issue", "canceled", 2*time.Second),
			running,
			call(a, hour.Add(6*time.Minute), "user:usr_1", "con_2", "slack_post_message", "forbidden", 90*time.Second),
			// Not a tool call, another tenant's, and the hour after: none counts.
			audit.Event{ID: switchboard.NewOrderedID("aud", hour), TenantID: a, At: hour.Add(7 * time.Minute), Kind: audit.KindKeyCreated, Principal: "user:usr_1", Outcome: "ok"},
			call(b, hour.Add(8*time.Minute), "agent:agt_1", "con_1", "github_get_issue", "ok", time.Millisecond),
			call(a, hour.Add(time.Hour), "agent:agt_1", "con_1", "github_get_issue", "ok", time.Millisecond),
		)
		r := usage.NewRollup(db, nil)
		if err := r.Hour(ctx, string(a), hour); err != nil {
			t.Fatal(err)
		}
		type row struct {
			Principal, ConnectionID, Tool              string
			Calls, Errors, Timed, LatencySum, B00, B03 int64
			B07, B08, B09, B13                         int64
		}
		var rows []row
		read := func() {
			t.Helper()
			rows = nil
			if err := db.Table("usage_hourly").Where("tenant_id = ?", a).Order("principal").Find(&rows).Error; err != nil {
				t.Fatal(err)
			}
		}
		read()
		want := []row{
			// Five calls, one in flight (no latency yet), one error (canceled is not one).
			{Principal: "agent:agt_1", ConnectionID: "con_1", Tool: "github_get_issue", Calls: 5, Errors: 1, Timed: 4,
				LatencySum: 3_000 + 40_000 + 700_000 + 2_000_000, B00: 1, B03: 1, B07: 1, B08: 1},
			{Principal: "user:usr_1", ConnectionID: "con_2", Tool: "slack_post_message", Calls: 1, Errors: 1, Timed: 1, LatencySum: 90_000_000, B13: 1},
		}
		if len(rows) != len(want) {
			t.Fatalf("usage_hourly holds %+v, want %+v", rows, want)
		}
		for i := range want {
			if rows[i] != want[i] {
				t.Errorf("row %d is %+v, want %+v", i, rows[i], want[i])
			}
		}
		// Recomputing after the call in flight completed counts its outcome, not the call
		// twice.
		if err := db.Model(&audit.Event{}).Where("id = ?", running.ID).Updates(map[string]any{"outcome": "ok", "latency_micros": 30_000}).Error; err != nil {
			t.Fatal(err)
		}
		if err := r.Hour(ctx, string(a), hour); err != nil {
			t.Fatal(err)
		}
		read()
		want[0].Timed, want[0].LatencySum, want[0].B03 = 5, want[0].LatencySum+30_000, 2
		if len(rows) != 2 || rows[0] != want[0] {
			t.Errorf("after the call completed, usage_hourly holds %+v, want %+v first", rows, want[0])
		}
	})
}
