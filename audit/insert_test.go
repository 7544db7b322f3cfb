package audit_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// events are n tool-call events of tenant with IDs that start with prefix.
func events(tenant switchboard.TenantID, prefix string, n int) []audit.Event {
	es := make([]audit.Event, n)
	for i := range es {
		es[i] = audit.Event{ID: fmt.Sprintf("%s%04d", prefix, i), TenantID: tenant, At: time.Now().UTC().Truncate(time.Microsecond),
			Kind: audit.KindToolCall, Principal: "user:usr_1", Tool: "github_get_issue", ConnectionID: "con_1", Outcome: "ok"}
	}
	return es
}

// TestBatchOfUpToSixteenRowsIsOneStatement: a batch of up to 16 rows is written by one
// INSERT of its size, with no transaction around it (on SQLite a transaction cost a
// BEGIN and a COMMIT parsed and run, and a statement journal, for every batch); a
// larger one by several statements in one transaction. Every row is written.
func TestBatchOfUpToSixteenRowsIsOneStatement(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_one")
		in := audit.NewInserter(db)
		defer in.Close()
		ctx := context.Background()
		for _, n := range []int{1, 5, 16} {
			if err := in.Insert(ctx, events(tenant, fmt.Sprintf("aud_one%d_", n), n)); err != nil {
				t.Fatal(err)
			}
		}
		if got := in.Transactions(); got != 0 {
			t.Errorf("batches of 1, 5 and 16 rows took %d transactions, want none", got)
		}
		if got, want := in.Sizes(), []int{1, 5, 16}; !slices.Equal(got, want) {
			t.Errorf("statements prepared for %v rows, want %v", got, want)
		}
		if err := in.Insert(ctx, events(tenant, "aud_one17_", 17)); err != nil {
			t.Fatal(err)
		}
		if got := in.Transactions(); got != 1 {
			t.Errorf("a batch of 17 rows took %d transactions, want 1", got)
		}
		var n int64
		if err := db.Model(&audit.Event{}).Where("tenant_id = ?", tenant).Count(&n).Error; err != nil || n != 1+5+16+17 {
			t.Errorf("rows written = %d (%v), want %d", n, err, 1+5+16+17)
		}
	})
}

// TestLargeBatchesTakeFewStatements: a large batch goes in a few large INSERTs on both
// databases (on SQLite it once went in 16-row ones, while its driver bound each argument
// by scanning those before it).
func TestLargeBatchesTakeFewStatements(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_large")
		in := audit.NewInserter(db)
		defer in.Close()
		if err := in.Insert(context.Background(), events(tenant, "aud_large", 300)); err != nil {
			t.Fatal(err)
		}
		if got, want := in.Sizes(), []int{12, 16, 256}; !slices.Equal(got, want) {
			t.Errorf("statements prepared for %v rows, want %v", got, want)
		}
		var n int64
		if err := db.Model(&audit.Event{}).Where("tenant_id = ?", tenant).Count(&n).Error; err != nil || n != 300 {
			t.Errorf("rows written = %d (%v), want 300", n, err)
		}
	})
}
