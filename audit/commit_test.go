package audit_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestCommitReturnsOnceTheRowIsWritten: when Commit returns, the row is in the table,
// with every field as given, on both databases; and one that outlives a Flush does too.
func TestCommitReturnsOnceTheRowIsWritten(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_c")
		// The hour's interval shows that Commit does not wait for it.
		w := audit.NewWriter(db, audit.WriterOptions{FlushInterval: time.Hour})
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		at := time.Date(2026, 11, 24, 1, 2, 3, 456789000, time.UTC)
		want := audit.Event{ID: "aud_commit1", TenantID: tenant, At: at, Kind: audit.KindToolCall, Principal: "user:usr_1", KeyID: "key_1",
			Tool: "github_get_issue", ConnectionID: "con_1", Outcome: "upstream", UpstreamStatus: 502, LatencyMicros: 1234, ArgsHash: "ab12", Detail: "d"}
		if err := w.Commit(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		var got audit.Event
		if err := db.Where("id = ?", want.ID).First(&got).Error; err != nil {
			t.Fatalf("the row is not there when Commit returned: %v", err)
		}
		got.At = got.At.UTC()
		if got != want {
			t.Errorf("row = %+v\nwant  %+v", got, want)
		}
	})
}

// TestCommitsGroupUnderLoad: calls that commit while a transaction is under way share
// the next one, so a hundred callers cost a handful of transactions, not a hundred.
func TestCommitsGroupUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	tenant := addTenant(t, db, "ten_g")
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	// Another connection holds SQLite's write lock, so the first transaction waits and
	// the other callers queue behind it.
	lock, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(db, audit.WriterOptions{Metrics: m})
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	const callers = 100
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			errs <- w.Commit(ctx, audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:u", Detail: fmt.Sprint(i)})
		})
	}
	// Every caller has queued its event: the first transaction (however many it
	// gathered) waits on the lock and the rest wait in the queue behind it. (Before,
	// this waited for the queue's length to stop changing, which a caller slow to
	// start could outlast, and earlier for a length the first batch could make
	// unreachable.)
	testwait.Until(t, fmt.Sprintf("all %d callers to queue their events", callers), func() bool { return w.Queued() == callers })
	if n := telemetrytest.Samples(t, reg, "switchboard_audit")[`switchboard_audit_flush_duration_seconds_count{outcome="ok"}`]; n != 0 {
		t.Fatalf("%g transactions committed while another connection held the write lock", n)
	}
	if _, err := lock.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	_ = lock.Close()
	testwait.Wait(t, "the callers' Commits to return", wg.Wait)
	got := committed(t, errs, reg, callers)
	if n := got[`switchboard_audit_flush_duration_seconds_count{outcome="ok"}`]; n > 3 {
		t.Errorf("%g transactions for %d callers, want at most 3 (one before the queue formed, one or two for the queue)", n, callers)
	}
}

// TestSmallBatchesAllocateForTheirRows: a batch of one row (a quiet hub commits one
// call's row at a time) allocates for that row's arguments, not for the 256 rows of
// the largest prepared INSERT (53 KB on every write, a third of all a tool call
// allocated). Not parallel: it reads the process's allocation counter.
func TestSmallBatchesAllocateForTheirRows(t *testing.T) {
	db := testdb.SQLite(t)
	tenant := addTenant(t, db, "ten_alloc")
	in := audit.NewInserter(db)
	defer in.Close()
	ctx := context.Background()
	event := func(i int) []audit.Event {
		return []audit.Event{{ID: fmt.Sprintf("aud_alloc%d", i), TenantID: tenant, At: time.Now(), Kind: audit.KindToolCall,
			Principal: "user:usr_1", Tool: "github_get_issue", ConnectionID: "con_1", Outcome: "ok"}}
	}
	if err := in.Insert(ctx, event(0)); err != nil { // prepares the statement
		t.Fatal(err)
	}
	least := uint64(1 << 62)
	for i := 1; i <= 5; i++ {
		rows := event(i)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := in.Insert(ctx, rows); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > 32<<10 {
		t.Errorf("writing one audit row allocated %d bytes, want under 32 KiB", least)
	}
	var n int64
	if err := db.Model(&audit.Event{}).Where("tenant_id = ?", tenant).Count(&n).Error; err != nil || n != 6 {
		t.Errorf("rows written = %d (%v), want 6", n, err)
	}
}

// TestReadyCallersShareTheTransaction: callers that are ready to run when a Commit
// reaches the writer get their events into its transaction, although none was queued
// yet: the writer lets them run before it writes. With one processor that is exact:
// the first caller's event wakes the writer, which would otherwise write that row
// alone and the others' in a second transaction (the hub wrote 1.4 rows a transaction
// at 16 callers, each costing SQLite about four rows' CPU in a batch). Not parallel: it
// sets GOMAXPROCS.
func TestReadyCallersShareTheTransaction(t *testing.T) {
	ctx := context.Background()
	db := testdb.SQLite(t)
	tenant := addTenant(t, db, "ten_ready")
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(db, audit.WriterOptions{Metrics: m})
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const callers = 8
	start := make(chan struct{})
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			errs <- w.Commit(ctx, audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:u", Detail: fmt.Sprint(i)})
		})
	}
	close(start)
	testwait.Wait(t, "the callers' Commits to return", wg.Wait)
	got := committed(t, errs, reg, callers)
	if n := got[`switchboard_audit_flush_duration_seconds_count{outcome="ok"}`]; n != 1 {
		t.Errorf("%g transactions for %d callers ready at once, want 1", n, callers)
	}
}

// committed checks the callers' Commits, whose errors errs holds, and that every one of
// their events was written; it returns the audit metrics' samples.
func committed(t *testing.T, errs chan error, reg *prometheus.Registry, callers int) map[string]float64 {
	t.Helper()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := telemetrytest.Samples(t, reg, "switchboard_audit")
	if n := got["switchboard_audit_events_written_total"]; n != float64(callers) {
		t.Errorf("events written = %g, want %d", n, callers)
	}
	return got
}
