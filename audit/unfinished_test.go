package audit_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestRowsInFlightAreCompletedOrMarked: a call's row written in flight is completed by
// its completion (same id), a late row in flight never overwrites a completion, and
// the rows left in flight by a node no longer live are marked outcome_unknown while a
// live node's are left alone; on both databases, through one batch and row by row.
func TestRowsInFlightAreCompletedOrMarked(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		tenant := addTenant(t, db, "ten_f")
		w := audit.NewWriter(db, audit.WriterOptions{FlushInterval: time.Hour})
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		at := time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC)
		row := func(id, node, outcome string) audit.Event {
			return audit.Event{ID: id, TenantID: tenant, At: at, Kind: audit.KindToolCall, Principal: "user:usr_1", Tool: "github_create_issue",
				ConnectionID: "con_1", Outcome: outcome, Node: node, Detail: "step 1"}
		}
		for _, e := range []audit.Event{
			row("aud_done", "node-a", audit.OutcomeInFlight),
			row("aud_late", "node-a", audit.OutcomeInFlight),
			row("aud_live", "node-a", audit.OutcomeInFlight),
			row("aud_dead", "node-b", audit.OutcomeInFlight),
			row("aud_back", "node-b", audit.OutcomeInFlight),
		} {
			if err := w.Commit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		done := row("aud_done", "node-a", "ok")
		done.UpstreamStatus, done.LatencyMicros = 201, 900
		if err := w.Commit(ctx, done); err != nil {
			t.Fatal(err)
		}
		late := row("aud_late", "node-a", "upstream")
		late.UpstreamStatus = 502
		if err := w.Commit(ctx, late); err != nil {
			t.Fatal(err)
		}
		// A row in flight that comes after its completion (its caller stopped waiting).
		if err := w.Commit(ctx, row("aud_late", "node-a", audit.OutcomeInFlight)); err != nil {
			t.Fatal(err)
		}
		n, err := audit.MarkUnfinished(ctx, db, []string{"node-a"})
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("marked %d rows, want node-b's 2", n)
		}
		// node-b's call did finish after all: its completion wins over the mark.
		if err := w.Commit(ctx, row("aud_back", "node-b", "ok")); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"aud_done": "ok", "aud_late": "upstream", "aud_live": audit.OutcomeInFlight, "aud_dead": audit.OutcomeUnknown, "aud_back": "ok"}
		var rows []audit.Event
		if err := db.Where("tenant_id = ?", tenant).Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Errorf("%d rows, want %d", len(rows), len(want))
		}
		for _, r := range rows {
			if r.Outcome != want[r.ID] {
				t.Errorf("row %s: outcome %q, want %q", r.ID, r.Outcome, want[r.ID])
			}
			if r.ID == "aud_done" && (r.UpstreamStatus != 201 || r.LatencyMicros != 900 || r.Detail != "step 1") {
				t.Errorf("completed row %+v, want the completion's status and latency, the detail kept", r)
			}
		}
		if _, err := audit.MarkUnfinished(ctx, db, nil); err == nil {
			t.Error("MarkUnfinished with no live node: no error, want one (every row would be marked)")
		}
	})
}
