package workflows

import (
	"context"
	"path/filepath"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/tenants"
)

// twoTenants creates two tenants and returns their ids.
func twoTenants(t testing.TB, db *gorm.DB) (switchboard.TenantID, switchboard.TenantID) {
	t.Helper()
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	var ids []switchboard.TenantID
	for _, slug := range []string{"wa", "wb"} {
		slug += "-" + switchboard.RandomToken(4)
		ten, err := ts.CreateTenant(context.Background(), slug, slug)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ten.ID)
	}
	return ids[0], ids[1]
}

func newKeyring(t testing.TB) keyring.Keyring {
	t.Helper()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestStoreIsTenantScoped(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		a, b := twoTenants(t, db)
		s := NewStore(db, newKeyring(t))
		w := &Workflow{Name: "triage", Description: "one", Definition: "{}", Source: "{}", CreatedBy: "user:u1"}
		created, err := s.Save(ctx, a, w, false)
		if err != nil || !created || w.Version != 1 {
			t.Fatalf("save = %v, %v, version %d", created, err, w.Version)
		}
		again := &Workflow{Name: "triage", Description: "two", Definition: "{}", Source: "{}", CreatedBy: "user:u2"}
		if _, err := s.Save(ctx, a, again, false); switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Fatalf("save without overwrite = %v, want conflict", err)
		}
		created, err = s.Save(ctx, a, again, true)
		if err != nil || created || again.Version != 2 || again.ID != w.ID || again.CreatedBy != "user:u1" || again.UpdatedBy != "user:u2" {
			t.Fatalf("overwrite = %v, %v, %+v", created, err, again)
		}
		// Tenant b sees nothing of a's, and may use the same name.
		if _, err := s.Get(ctx, b, "triage"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Fatalf("b reads a's workflow: %v", err)
		}
		if err := s.Delete(ctx, b, "triage"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Fatalf("b deletes a's workflow: %v", err)
		}
		if ws, err := s.List(ctx, b, ""); err != nil || len(ws) != 0 {
			t.Fatalf("b lists %v, %v", ws, err)
		}
		if _, err := s.Save(ctx, b, &Workflow{Name: "triage", Definition: "{}", Source: "{}", CreatedBy: "user:b"}, false); err != nil {
			t.Fatalf("b saves its own triage: %v", err)
		}
		got, err := s.Get(ctx, a, "triage")
		if err != nil || got.Description != "two" || got.Version != 2 {
			t.Fatalf("a's triage = %+v, %v", got, err)
		}
		if err := s.Delete(ctx, a, "triage"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, b, "triage"); err != nil {
			t.Fatalf("deleting a's removed b's: %v", err)
		}
	})
}

func TestStepIOIsSealedToItsStep(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	ctx := context.Background()
	a, b := twoTenants(t, db)
	s := NewStore(db, newKeyring(t))
	r := &StepRecord{TenantID: a, RunID: "run_1", Step: "fetch", Item: wholeStep, Tool: "flow_read", Attempts: 1}
	if err := s.startStep(ctx, r, []byte(`{"key":"secret-ish"}`)); err != nil {
		t.Fatal(err)
	}
	r.State = StepCompleted
	if err := s.finishStep(ctx, r, []byte(`{"value":"v"}`)); err != nil {
		t.Fatal(err)
	}
	var raw StepRecord
	if err := db.Where("id = ?", r.ID).Take(&raw).Error; err != nil {
		t.Fatal(err)
	}
	if string(raw.InputSealed) == `{"key":"secret-ish"}` || len(raw.OutputSealed) == 0 {
		t.Fatalf("input stored in the clear or output missing: %q", raw.InputSealed)
	}
	rs, err := s.Steps(ctx, a, "run_1")
	if err != nil || len(rs) != 1 {
		t.Fatalf("steps = %v, %v", rs, err)
	}
	in, err := s.Input(ctx, &rs[0])
	out, err2 := s.Output(ctx, &rs[0])
	if err != nil || err2 != nil || string(in) != `{"key":"secret-ish"}` || string(out) != `{"value":"v"}` {
		t.Fatalf("opened %s, %s (%v, %v)", in, out, err, err2)
	}
	// A sealed output moved to another step (or tenant) does not open.
	moved := rs[0]
	moved.Step = "other"
	if _, err := s.Output(ctx, &moved); err == nil {
		t.Fatal("an output opened as another step's")
	}
	if rs, err := s.Steps(ctx, b, "run_1"); err != nil || len(rs) != 0 {
		t.Fatalf("tenant b reads a's steps: %v, %v", rs, err)
	}
}
