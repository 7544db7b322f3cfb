package audit_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// addTenant inserts a bare tenant row, which audit events reference.
func addTenant(t testing.TB, db *gorm.DB, id string) switchboard.TenantID {
	t.Helper()
	if err := db.Exec("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, ?)", id, id, id, time.Now().UTC()).Error; err != nil {
		t.Fatalf("add tenant: %v", err)
	}
	return switchboard.TenantID(id)
}

func TestWriterWritesEveryEvent(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_a")
		// A queue of 64 and batches of 32 for 2,000 events: the callers fill the queue and
		// block on it, and the events go in many batches, as 10,000 would with the
		// defaults, at a fifth of the cost under the race detector.
		w := audit.NewWriter(db, audit.WriterOptions{QueueSize: 64, BatchSize: 32})
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		const events, goroutines = 2_000, 64
		var wg sync.WaitGroup
		for g := range goroutines {
			n := events / goroutines
			if g == 0 {
				n += events % goroutines
			}
			wg.Go(func() {
				for i := range n {
					w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:usr_1", Tool: fmt.Sprintf("fake_op_%d", g), Outcome: "ok", LatencyMicros: int64(i)})
				}
			})
		}
		testwait.Wait(t, "the callers' Records to return", wg.Wait)
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := db.Model(&audit.Event{}).Where("tenant_id = ?", tenant).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != events {
			t.Errorf("rows = %d, want %d", n, events)
		}
	})
}

func TestWriterCloseFlushesAndLaterRecordsStillLand(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_a")
		w := audit.NewWriter(db, audit.WriterOptions{FlushInterval: time.Hour})
		w.Record(audit.Event{TenantID: tenant, Kind: audit.KindKeyCreated, Principal: "user:usr_1"})
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		w.Record(audit.Event{TenantID: tenant, Kind: audit.KindKeyRevoked, Principal: "user:usr_1", Detail: "after close"})
		var kinds []string
		if err := db.Model(&audit.Event{}).Order("kind").Pluck("kind", &kinds).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"key_created", "key_revoked"}, kinds); diff != "" {
			t.Errorf("kinds (-want +got):\n%s", diff)
		}
	})
}

func TestWriterSkipsOnlyTheRowTheDatabaseRefuses(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		tenant := addTenant(t, db, "ten_a")
		w := audit.NewWriter(db, audit.WriterOptions{Logger: slog.New(slog.DiscardHandler)})
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:a", Tool: "good_1"})
		w.Record(audit.Event{TenantID: "ten_missing", Kind: audit.KindToolCall, Principal: "user:a", Tool: "orphan"})
		w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:a", Tool: "good_2"})
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var tools []string
		if err := db.Model(&audit.Event{}).Order("tool").Pluck("tool", &tools).Error; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"good_1", "good_2"}, tools); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})
}

func TestStoreList(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		a := addTenant(t, db, "ten_a")
		b := addTenant(t, db, "ten_b")
		w := audit.NewWriter(db, audit.WriterOptions{})
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i := range 5 {
			w.Record(audit.Event{ID: fmt.Sprintf("aud_a%d", i), TenantID: a, At: base.Add(time.Duration(i) * time.Second), Kind: audit.KindToolCall, Principal: "user:u", Tool: []string{"x_one", "x_two"}[i%2], Outcome: "ok"})
		}
		// Two events at the same instant: the cursor must not skip or repeat either.
		w.Record(audit.Event{ID: "aud_a5", TenantID: a, At: base.Add(5 * time.Second), Kind: audit.KindKeyCreated, Principal: "user:u"})
		w.Record(audit.Event{ID: "aud_a6", TenantID: a, At: base.Add(5 * time.Second), Kind: audit.KindKeyCreated, Principal: "user:u"})
		w.Record(audit.Event{ID: "aud_b0", TenantID: b, At: base.Add(time.Hour), Kind: audit.KindToolCall, Principal: "user:v", Tool: "x_one"})
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := audit.NewStore(db)
		ids := func(es []audit.Event) []string {
			var out []string
			for _, e := range es {
				out = append(out, e.ID)
			}
			return out
		}
		before := base.Add(2 * time.Second)
		tests := []struct {
			name    string
			tenant  switchboard.TenantID
			opts    audit.ListOptions
			want    []string
			wantErr string
		}{
			{name: "all of tenant a, newest first", tenant: a, want: []string{"aud_a6", "aud_a5", "aud_a4", "aud_a3", "aud_a2", "aud_a1", "aud_a0"}},
			{name: "tenant b sees only its own", tenant: b, want: []string{"aud_b0"}},
			{name: "kind", tenant: a, opts: audit.ListOptions{Kind: audit.KindKeyCreated}, want: []string{"aud_a6", "aud_a5"}},
			{name: "tool", tenant: a, opts: audit.ListOptions{Tool: "x_two"}, want: []string{"aud_a3", "aud_a1"}},
			{name: "before", tenant: a, opts: audit.ListOptions{Before: &before}, want: []string{"aud_a1", "aud_a0"}},
			{name: "tool of another tenant", tenant: b, opts: audit.ListOptions{Tool: "x_two"}, want: nil},
			{name: "part of a tool's name", tenant: a, opts: audit.ListOptions{Tool: "two"}, want: []string{"aud_a3", "aud_a1"}},
			{name: "a part common to both tools", tenant: a, opts: audit.ListOptions{Tool: "x_"}, want: []string{"aud_a4", "aud_a3", "aud_a2", "aud_a1", "aud_a0"}},
			{name: "underscore and percent are literal", tenant: a, opts: audit.ListOptions{Tool: "x%o"}, want: nil},
			{name: "limit too large", tenant: a, opts: audit.ListOptions{Limit: 501}, wantErr: "limit"},
			{name: "bad cursor", tenant: a, opts: audit.ListOptions{Cursor: "!!"}, wantErr: "cursor"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, _, err := s.List(context.Background(), tt.tenant, tt.opts)
				if tt.wantErr != "" {
					if e := switchboard.AsError(err); err == nil || e.Code != switchboard.CodeInvalid || e.Field != tt.wantErr {
						t.Fatalf("err = %v, want invalid %s", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("pages", func(t *testing.T) {
			var all []string
			cursor := ""
			for page := 0; ; page++ {
				got, next, err := s.List(context.Background(), a, audit.ListOptions{Limit: 2, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, ids(got)...)
				if next == "" {
					break
				}
				if page > 10 {
					t.Fatal("cursor does not advance")
				}
				cursor = next
			}
			if diff := cmp.Diff([]string{"aud_a6", "aud_a5", "aud_a4", "aud_a3", "aud_a2", "aud_a1", "aud_a0"}, all); diff != "" {
				t.Errorf("paged ids (-want +got):\n%s", diff)
			}
		})
		t.Run("fields round-trip", func(t *testing.T) {
			got, _, err := s.List(context.Background(), b, audit.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []audit.Event{{ID: "aud_b0", TenantID: b, At: base.Add(time.Hour), Kind: audit.KindToolCall, Principal: "user:v", Tool: "x_one", Outcome: "ok"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	})
}

// BenchmarkRecord measures sustained throughput on SQLite: every iteration records one
// event, and the timer includes the final flush, so the figure is rows written per
// second, not merely queued.
func BenchmarkRecord(b *testing.B) {
	db := testdb.SQLite(b)
	tenant := addTenant(b, db, "ten_bench")
	w := audit.NewWriter(db, audit.WriterOptions{})
	defer w.Close(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Record(audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:usr_bench", KeyID: "key_bench", Tool: "github_list_issues", ConnectionID: "con_bench", Outcome: "ok", UpstreamStatus: 200, LatencyMicros: 1234})
		}
	})
	if err := w.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestAssignedIDsSortByTime: the IDs the writer gives events sort as the events' times
// do, whatever the order they were recorded in, so audit_events' primary key index grows
// at its end instead of taking each row on a page of its own (random IDs wrote a page
// of the index per row: a third more CPU per row on SQLite, BenchmarkCommit).
func TestAssignedIDsSortByTime(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	tenant := addTenant(t, db, "ten_ids")
	w := audit.NewWriter(db, audit.WriterOptions{})
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	base := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, i := range []int{7, 2, 9, 0, 4, 1, 8, 3, 6, 5} {
		w.Record(audit.Event{TenantID: tenant, At: base.Add(time.Duration(i) * time.Millisecond), Kind: audit.KindToolCall, Principal: "user:usr_1", Outcome: "ok"})
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []audit.Event
	if err := db.Where("tenant_id = ?", tenant).Order("id").Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("%d rows, want 10", len(got))
	}
	for i, e := range got {
		if want := base.Add(time.Duration(i) * time.Millisecond); !e.At.Equal(want) {
			t.Errorf("row %d by id (%s) is at %v, want %v", i, e.ID, e.At.UTC(), want)
		}
	}
}
