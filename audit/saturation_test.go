package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

func TestSaturatedWhileTheDatabaseHoldsWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	tenant := addTenant(t, db, "ten_sat")
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	// Another connection holds SQLite's write lock, so the writer cannot drain.
	lock, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(db, audit.WriterOptions{QueueSize: 10, BatchSize: 1, FlushInterval: time.Millisecond})
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	if w.Saturated() {
		t.Fatal("a new writer is saturated")
	}
	for i := range 11 { // one in the writer's hands, ten queued
		w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:u", Outcome: "ok", Detail: string(rune('a' + i))})
	}
	if !w.Saturated() {
		t.Fatal("the queue is full and the writer does not say it is saturated")
	}
	if _, err := lock.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	_ = lock.Close()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Saturated() {
		t.Error("still saturated after the queue drained")
	}
	var n int64
	if err := db.Table("audit_events").Where("tenant_id = ?", tenant).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	if n != 11 {
		t.Errorf("rows written = %d, want 11: none may be dropped", n)
	}
}
