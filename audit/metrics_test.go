package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestWriterMetrics: the queue's depth is reported on scrape, and each batch written
// is timed and its events counted.
func TestWriterMetrics(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	tenant := addTenant(t, db, "ten_m")
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(db, audit.WriterOptions{FlushInterval: time.Hour, BatchSize: 1000, Metrics: m})
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	if err := m.AuditQueue(w.QueueLen); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:usr_1", Tool: "fake_op"})
	}
	// Nothing is written before the hour's flush, so the five may still be queued (or
	// taken off the queue into the batch): at most five wait.
	if got := telemetrytest.Samples(t, reg, "switchboard_audit_queue_depth")["switchboard_audit_queue_depth"]; got > 5 {
		t.Errorf("queue depth %g, want at most 5", got)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := telemetrytest.Samples(t, reg, "switchboard_audit")
	delete(got, `switchboard_audit_flush_duration_seconds_sum{outcome="ok"}`)
	want := map[string]float64{
		"switchboard_audit_queue_depth":                                0,
		`switchboard_audit_flush_duration_seconds_count{outcome="ok"}`: 1,
		"switchboard_audit_events_written_total":                       5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit metrics (-want +got):\n%s", diff)
	}
}
