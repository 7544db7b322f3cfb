package sessions_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/sessions"
)

// store is what both implementations offer.
type store interface {
	Create(ctx context.Context, r sessions.Record, limit int) ([]sessions.Ended, error)
	Get(ctx context.Context, tenant switchboard.TenantID, id string) (sessions.Record, error)
	Touch(ctx context.Context, tenant switchboard.TenantID, id string, at time.Time) error
	SetLogLevel(ctx context.Context, tenant switchboard.TenantID, id, level string) error
	SetSubscription(ctx context.Context, tenant switchboard.TenantID, id, uri string, on bool) error
	Delete(ctx context.Context, tenant switchboard.TenantID, id string) error
	DeleteExpired(ctx context.Context, now time.Time, l sessions.Limits) ([]sessions.Ended, error)
}

// eachStore runs fn on the database store (SQLite, and PostgreSQL when configured) and
// on the in-memory one.
func eachStore(t *testing.T, fn func(t *testing.T, s store)) {
	t.Helper()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		fn(t, sessions.NewStore(db))
	})
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		fn(t, sessions.NewMemory())
	})
}

var t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

func rec(id string, tenant switchboard.TenantID, principal string, created time.Time) sessions.Record {
	return sessions.Record{ID: id, TenantID: tenant, PrincipalID: principal, KeyID: "key_1", ProtocolVersion: "2025-06-18",
		ClientInfo: json.RawMessage(`{"name":"c","version":"1"}`), Capabilities: json.RawMessage(`{"elicitation":{}}`), CreatedAt: created}
}

func TestStoreKeepsSessionsPerTenant(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		a := rec("mcs_a", "ten_a", "user:u1", t0)
		if _, err := s.Create(ctx, a, 100); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "ten_a", "mcs_a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, got, cmp.Comparer(func(x, y time.Time) bool { return x.Equal(y) })); diff != "" {
			t.Errorf("get (-want +got):\n%s", diff)
		}
		if _, err := s.Get(ctx, "ten_b", "mcs_a"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("get from another tenant: %v, want not found", err)
		}
		// Another tenant's writes change nothing.
		_ = s.Touch(ctx, "ten_b", "mcs_a", t0.Add(time.Minute))
		_ = s.SetLogLevel(ctx, "ten_b", "mcs_a", "debug")
		_ = s.Delete(ctx, "ten_b", "mcs_a")
		got, err = s.Get(ctx, "ten_a", "mcs_a")
		if err != nil || got.LastUsedAt != nil || got.LogLevel != "" {
			t.Errorf("after another tenant's writes: %+v %v", got, err)
		}
		if err := s.Touch(ctx, "ten_a", "mcs_a", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.SetLogLevel(ctx, "ten_a", "mcs_a", "debug"); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Get(ctx, "ten_a", "mcs_a")
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(t0.Add(time.Minute)) || got.LogLevel != "debug" {
			t.Errorf("after touch and log level: %+v", got)
		}
		if err := s.Delete(ctx, "ten_a", "mcs_a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "ten_a", "mcs_a"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("get after delete: %v", err)
		}
	})
}

func TestStoreCapsAndExpires(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		for i, id := range []string{"mcs_1", "mcs_2", "mcs_3"} {
			if _, err := s.Create(ctx, rec(id, "ten_a", "user:u1", t0.Add(time.Duration(i)*time.Second)), 3); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Create(ctx, rec("mcs_other", "ten_a", "user:u2", t0), 3); err != nil {
			t.Fatal(err)
		}
		_ = s.Touch(ctx, "ten_a", "mcs_1", t0.Add(10*time.Second)) // mcs_2 is now the oldest idle
		evicted, err := s.Create(ctx, rec("mcs_4", "ten_a", "user:u1", t0.Add(20*time.Second)), 3)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]sessions.Ended{{TenantID: "ten_a", ID: "mcs_2"}}, evicted); diff != "" {
			t.Errorf("evicted (-want +got):\n%s", diff)
		}
		l := sessions.Limits{Unused: 2 * time.Minute, Idle: 30 * time.Minute}
		// At t0+2m15s the never-used mcs_3 (t0+2s) and mcs_other (t0) are over 2 minutes.
		ended, err := s.DeleteExpired(ctx, t0.Add(2*time.Minute+15*time.Second), l)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range ended {
			ids = append(ids, e.ID)
		}
		slices.Sort(ids)
		if diff := cmp.Diff([]string{"mcs_3", "mcs_other"}, ids); diff != "" {
			t.Errorf("expired (-want +got):\n%s", diff)
		}
		for _, id := range []string{"mcs_1", "mcs_4"} {
			if _, err := s.Get(ctx, "ten_a", id); err != nil {
				t.Errorf("%s: %v, want it kept", id, err)
			}
		}
	})
}
