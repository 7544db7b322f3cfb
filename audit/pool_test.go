package audit_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestBatchNeedsNoSecondConnection: a batch takes no other connection of the pool while
// its transaction is open. On SQLite that transaction holds the write lock, so waiting
// there for a connection whose writer waits for the lock stalled both until the busy
// timeout (requests failed with 503 under load); a pool of one connection shows it
// every time, as a Commit that never returns.
func TestBatchNeedsNoSecondConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_pool")
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		sqlDB.SetMaxOpenConns(1)
		w := audit.NewWriter(db, audit.WriterOptions{FlushInterval: time.Hour})
		// The deadlines only end a test that would hang.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = w.Close(ctx)
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Seventeen events need two prepared statements (16 rows and 1 row), each new,
		// in one transaction.
		for range 16 {
			w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:usr_1", Tool: "fake_op", Outcome: "ok"})
		}
		if err := w.Commit(ctx, audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:usr_1", Tool: "fake_op", Outcome: "ok"}); err != nil {
			t.Fatalf("commit on a pool of one connection: %v", err)
		}
		var n int64
		if err := db.Model(&audit.Event{}).Where("tenant_id = ?", tenant).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 17 {
			t.Errorf("rows = %d, want 17", n)
		}
	})
}
