package runs

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// received waits for n requests to be held at the upstream's gate.
func received(t *testing.T, r *rig, n int) {
	t.Helper()
	for range n {
		select {
		case <-r.up.Waiting():
		case <-time.After(30 * time.Second):
			t.Fatal("no request reached the upstream")
		}
	}
}

func TestConcurrencyIsBoundedPerTenant(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.MaxPerTenant = 2; o.MaxQueuedPerTenant = 4 })
		ctx := context.Background()
		var ids []string
		for range 4 {
			v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, v.ID)
		}
		received(t, r, 2)
		// Two of ann's runs hold the tenant's two slots at the upstream: the other two
		// have not started. The tenant's fifth run is refused.
		_, err := r.exec.Start(ctx, r.bob, Call{Tool: "notes_wait", ConnectionID: r.connA})
		wantCode(t, err, switchboard.CodeRateLimited, "")
		var started, waiting int
		for _, id := range ids {
			switch row := r.row(t, id); {
			case row.Attempts == 1 && row.StartedAt != nil:
				started++
			case row.Attempts == 0 && row.StartedAt == nil && row.State == StateWorking:
				waiting++
			}
		}
		if started != 2 || waiting != 2 {
			t.Errorf("%d started and %d waiting, want 2 and 2", started, waiting)
		}
		// Another tenant is not held up by the first one's bound.
		vb, err := r.exec.Start(ctx, r.bea, Call{Tool: "notes_wait", ConnectionID: r.connB})
		if err != nil {
			t.Fatal(err)
		}
		received(t, r, 1)
		r.up.Release()
		for _, id := range ids {
			if got := r.wait(t, r.exec, r.ann, id); got.State != StateCompleted {
				t.Errorf("run %s is %s, want completed", id, got.State)
			}
		}
		if got := r.wait(t, r.exec, r.bea, vb.ID); got.State != StateCompleted {
			t.Errorf("beta's run is %s, want completed", got.State)
		}
		// The slots are free again.
		if _, err := r.exec.Start(ctx, r.bob, Call{Tool: "notes_wait", ConnectionID: r.connA}); err != nil {
			t.Errorf("start after the runs ended: %v", err)
		}
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.MaxPerTenant = 1 })
		ctx := context.Background()
		executing, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
		if err != nil {
			t.Fatal(err)
		}
		received(t, r, 1)
		queued, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{"text":"never"}`)})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{queued.ID, executing.ID} {
			v, err := r.exec.Cancel(ctx, r.ann, id)
			if err != nil {
				t.Fatalf("cancel %s: %v", id, err)
			}
			if v.State != StateCanceled || v.FinishedAt == nil || v.Error == nil || v.Error.Code != "canceled" {
				t.Errorf("canceled run = %+v", v)
			}
			if got := r.wait(t, r.exec, r.ann, id); got.State != StateCanceled {
				t.Errorf("run %s ended %s, want canceled", id, got.State)
			}
			_, err = r.exec.Cancel(ctx, r.ann, id)
			wantCode(t, err, switchboard.CodeConflict, "")
		}
		// The executing run's context was canceled (the slot is free: a new run executes
		// while the gate is still closed), and the queued one never reached the upstream.
		next, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n404"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.wait(t, r.exec, r.ann, next.ID); got.State != StateFailed {
			t.Errorf("next run is %s, want failed (not found)", got.State)
		}
		for _, req := range r.up.Requests() {
			if req.Method == "POST" {
				t.Errorf("the canceled queued run reached the upstream: %+v", req)
			}
		}
		if got := r.row(t, executing.ID); got.State != StateCanceled || got.OutputSealed != nil {
			t.Errorf("executing run ended %s with output %q, want canceled without output", got.State, got.OutputSealed)
		}
	})
}

func TestConfirmation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		tests := []struct {
			name      string
			action    string
			wantState State
			wantNote  bool
			wantCode  string
		}{
			{name: "accept runs it", action: "accept", wantState: StateCompleted, wantNote: false},
			{name: "decline runs nothing", action: "decline", wantState: StateCanceled, wantNote: true, wantCode: "declined"},
			{name: "cancel runs nothing", action: "cancel", wantState: StateCanceled, wantNote: true, wantCode: "declined"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := r.up.Put("keep me?")
				v, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + id + `"}`)}, "Delete note "+id+" for good")
				if err != nil {
					t.Fatal(err)
				}
				if v.State != StateInputRequired || v.Elicitation == nil || v.Elicitation.Message != "Delete note "+id+" for good" || v.Elicitation.ExpiresAt == nil {
					t.Fatalf("pending run = %+v", v)
				}
				if _, err := r.exec.Answer(ctx, r.ann, v.ID, "maybe"); switchboard.CodeOf(err) != switchboard.CodeInvalid {
					t.Fatalf("answer maybe: %v, want invalid", err)
				}
				if _, err := r.exec.Answer(ctx, r.ann, v.ID, tt.action); err != nil {
					t.Fatal(err)
				}
				got := r.wait(t, r.exec, r.ann, v.ID)
				if got.State != tt.wantState || r.up.Has(id) != tt.wantNote {
					t.Errorf("after %s: state %s, note kept %v; want %s, %v", tt.action, got.State, r.up.Has(id), tt.wantState, tt.wantNote)
				}
				if tt.wantCode != "" && (got.Error == nil || got.Error.Code != tt.wantCode) {
					t.Errorf("error = %+v, want code %s", got.Error, tt.wantCode)
				}
				if got.Elicitation == nil || got.Elicitation.Action != tt.action {
					t.Errorf("elicitation = %+v, want action %s recorded", got.Elicitation, tt.action)
				}
				_, err = r.exec.Answer(ctx, r.ann, v.ID, "accept")
				wantCode(t, err, switchboard.CodeConflict, "")
			})
		}
	})
}

func TestConfirmationExpires(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.ConfirmTimeout = time.Minute })
		ctx := context.Background()
		id := r.up.Put("keep me")
		late, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + id + `"}`)}, "Delete")
		if err != nil {
			t.Fatal(err)
		}
		swept, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + id + `"}`)}, "Delete")
		if err != nil {
			t.Fatal(err)
		}
		real := r.store.now
		r.store.now = func() time.Time { return real().Add(2 * time.Minute) }
		_, err = r.exec.Answer(ctx, r.ann, late.ID, "accept")
		wantCode(t, err, switchboard.CodeConflict, "")
		if row := r.row(t, late.ID); row.State != StateFailed || row.ErrorCode != "timeout" {
			t.Errorf("a late answer left the run %s (%s), want failed timeout", row.State, row.ErrorCode)
		}
		if row := r.row(t, swept.ID); row.State != StateInputRequired {
			t.Errorf("a late answer to another run changed this one: %s", row.State)
		}
		r.exec.tick(ctx)
		for _, v := range []View{late, swept} {
			got, err := r.exec.Get(ctx, r.ann, v.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != StateFailed || got.Error == nil || got.Error.Code != "timeout" {
				t.Errorf("run %s = %s %+v, want failed timeout", v.ID, got.State, got.Error)
			}
		}
		if !r.up.Has(id) || len(r.up.Requests()) != 0 {
			t.Errorf("an expired confirmation reached the upstream: %+v", r.up.Requests())
		}
	})
}

// stuckRunner is a process that dies mid-call: Execute never returns until the test
// lets it, and then answers with output nobody asked for.
type stuckRunner struct {
	entered chan string
	release chan struct{}
	once    sync.Once
}

func (s *stuckRunner) Execute(ctx context.Context, _ switchboard.Principal, req router.Request) (any, error) {
	s.entered <- req.Tool
	<-s.release
	return map[string]string{"from": "the dead process"}, nil
}

func TestRecoveryAfterRestart(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		dead := &stuckRunner{entered: make(chan string, 8), release: make(chan struct{})}
		t.Cleanup(func() { dead.once.Do(func() { close(dead.release) }) })
		first := r.newExecutor(t, func(o *Options) { o.Runner = dead; o.MaxPerTenant = 2; o.Node = "node_first" })
		noteID := r.up.Put("read me again")
		resumable, err := first.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + noteID + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		interrupted, err := first.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{"text":"once only"}`)})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			testwait.Recv(t, dead.entered, "a run to enter the dying process's runner")
		}
		neverStarted, err := first.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{"text":"queued"}`)})
		if err != nil {
			t.Fatal(err)
		}
		// The first process stops renewing its leases (it died). A new process, whose
		// clock is past the leases, recovers.
		second := r.newExecutor(t, func(o *Options) { o.Node = "node_second" })
		real := r.store.now
		r.store.now = func() time.Time { return real().Add(time.Hour) }
		if err := second.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		got := r.wait(t, second, r.ann, resumable.ID)
		if got.State != StateCompleted || !strings.Contains(string(got.Output), "read me again") {
			t.Errorf("resumable run = %s %s %+v, want completed with the note", got.State, got.Output, got.Error)
		}
		got = r.wait(t, second, r.ann, interrupted.ID)
		if got.State != StateFailed || got.Error == nil || got.Error.Code != "interrupted" || !strings.Contains(got.Error.Message, "not idempotent") {
			t.Errorf("interrupted run = %s %+v, want failed interrupted", got.State, got.Error)
		}
		got = r.wait(t, second, r.ann, neverStarted.ID)
		if got.State != StateCompleted || !strings.Contains(string(got.Output), "queued") {
			t.Errorf("never-started run = %s %s %+v, want completed (it had not run)", got.State, got.Output, got.Error)
		}
		if row := r.row(t, resumable.ID); row.Attempts != 2 || row.LeaseOwner != "node_second" {
			t.Errorf("resumed run: attempts %d owner %s, want 2 and node_second", row.Attempts, row.LeaseOwner)
		}
		// The dead process comes back to life: what it answers now is not recorded.
		dead.once.Do(func() { close(dead.release) })
		closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		first.Close(closeCtx)
		for _, id := range []string{resumable.ID, interrupted.ID} {
			v, err := second.Get(ctx, r.ann, id)
			if err != nil || strings.Contains(string(v.Output), "dead process") {
				t.Errorf("run %s after the first process finished: %s %v", id, v.Output, err)
			}
		}
		var posts int
		for _, req := range r.up.Requests() {
			if req.Method == "POST" {
				posts++
			}
		}
		if posts != 1 {
			t.Errorf("%d notes created, want 1 (the queued run; the interrupted one must not run twice)", posts)
		}
	})
}

func TestCancelThroughAnotherProcessStopsTheRun(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.Node = "node_a"; o.MaxPerTenant = 1 })
		other := r.newExecutor(t, func(o *Options) { o.Node = "node_b" })
		ctx := context.Background()
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
		if err != nil {
			t.Fatal(err)
		}
		received(t, r, 1)
		if _, err := other.Cancel(ctx, r.ann, v.ID); err != nil {
			t.Fatal(err)
		}
		// The process running it learns on its next lease renewal, and stops the call:
		// its slot frees while the upstream still holds the gate closed.
		r.exec.tick(ctx)
		done, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n404"}`)})
		if err != nil {
			t.Fatal(err)
		}
		got := r.wait(t, r.exec, r.ann, v.ID)
		if got.State != StateCanceled || got.Output != nil {
			t.Errorf("run = %s %s, want canceled without output", got.State, got.Output)
		}
		if next := r.wait(t, r.exec, r.ann, done.ID); next.State != StateFailed {
			t.Errorf("next run = %s", next.State)
		}
	})
}

// TestConcurrentAcceptsRunOnce answers one confirmation with many accepts at once:
// exactly one starts the run, the others are conflicts, and the upstream sees one
// delete. A second hold of a run held here used to replace the first's entry, so the
// loser's release removed the winner's and its dispatch panicked.
func TestConcurrentAcceptsRunOnce(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		id := r.up.Put("delete me once")
		v, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + id + `"}`)}, "Delete note "+id)
		if err != nil {
			t.Fatal(err)
		}
		const callers = 16
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			accepted int
			codes    = map[switchboard.Code]int{}
		)
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := r.exec.Answer(ctx, r.ann, v.ID, "accept")
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					accepted++
					return
				}
				codes[switchboard.CodeOf(err)]++
			}()
		}
		testwait.Wait(t, "the concurrent answers to return", wg.Wait)
		if diff := cmp.Diff(map[switchboard.Code]int{switchboard.CodeConflict: callers - 1}, codes); accepted != 1 || diff != "" {
			t.Fatalf("accepted %d times, want 1; refusals (-want +got):\n%s", accepted, diff)
		}
		if got := r.wait(t, r.exec, r.ann, v.ID); got.State != StateCompleted || r.up.Has(id) {
			t.Fatalf("run %s, note kept %v; want completed and the note gone", got.State, r.up.Has(id))
		}
		deletes := 0
		for _, req := range r.up.Requests() {
			if req.Method == http.MethodDelete {
				deletes++
			}
		}
		if deletes != 1 {
			t.Errorf("the upstream received %d deletes, want 1", deletes)
		}
	})
}

// TestHoldRefusesARunHeldHere checks the bookkeeping directly: a run held here cannot
// be held again, and its release frees the tenant's count.
func TestHoldRefusesARunHeldHere(t *testing.T) {
	t.Parallel()
	e := NewExecutor(Options{})
	if err := e.hold("run_1", "ten_1"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.hold("run_1", "ten_1"), switchboard.CodeConflict, "")
	e.release("run_1", "ten_1")
	e.mu.Lock()
	held, tenants := len(e.local), len(e.tenants)
	e.mu.Unlock()
	if held != 0 || tenants != 0 {
		t.Fatalf("after release: %d runs and %d tenants held, want none", held, tenants)
	}
	if err := e.hold("run_1", "ten_1"); err != nil {
		t.Fatalf("hold after release: %v", err)
	}
}

func TestEndedRunsAreDeletedAfterTheRetention(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.Retention = time.Hour })
		ctx := context.Background()
		done, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n404"}`)})
		if err != nil {
			t.Fatal(err)
		}
		r.wait(t, r.exec, r.ann, done.ID)
		pending, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)}, "Delete")
		if err != nil {
			t.Fatal(err)
		}
		r.exec.tick(ctx)
		if _, err := r.exec.Get(ctx, r.ann, done.ID); err != nil {
			t.Fatalf("a run that ended just now was deleted: %v", err)
		}
		real := r.store.now
		r.store.now = func() time.Time { return real().Add(2 * time.Hour) }
		r.exec.tick(ctx) // fails the pending confirmation (expired) and deletes the old run
		_, err = r.exec.Get(ctx, r.ann, done.ID)
		wantCode(t, err, switchboard.CodeNotFound, "")
		if v, err := r.exec.Get(ctx, r.ann, pending.ID); err != nil || v.State != StateFailed {
			t.Errorf("the run that ended at this tick = %+v, %v; want kept, failed", v, err)
		}
	})
}
