package runs

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
)

// pausingRunner pauses each run the first time it executes (as a workflow whose step
// asks its person does), and runs it through next when it is resumed.
type pausingRunner struct {
	next   Runner
	mu     sync.Mutex
	paused map[string]bool
}

func (p *pausingRunner) Execute(ctx context.Context, pr switchboard.Principal, req router.Request) (any, error) {
	id, _ := IDFrom(ctx)
	p.mu.Lock()
	first := !p.paused[id]
	p.paused[id] = true
	p.mu.Unlock()
	if first {
		return nil, &Pause{Message: "step approval asks its person for input"}
	}
	return p.next.Execute(ctx, pr, req)
}

// TestPausedRunWaitsForResume: a run its Runner pauses waits input_required with no
// deadline: the background loop does not expire it, Wait returns it, its person's
// pending list holds it, a confirmation's answer is refused naming
// submit_flow_elicitation, another person cannot resume it, and Resume runs it to its
// end.
func TestPausedRunWaitsForResume(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		var pr *pausingRunner
		r := newRig(t, db, func(o *Options) {
			pr = &pausingRunner{next: o.Runner, paused: map[string]bool{}}
			o.Gate, o.Runner = o.Runner.(Gate), pr
		})
		ctx := context.Background()
		r.policy.set(r.ann, router.Policy{Confirm: router.ConfirmNever})
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{"text":"after the answer"}`)})
		if err != nil {
			t.Fatal(err)
		}
		v = r.wait(t, r.exec, r.ann, v.ID)
		if !v.Paused() || v.Elicitation == nil || v.Elicitation.Message != "step approval asks its person for input" {
			t.Fatalf("run = %+v; want paused with the step's message", v)
		}
		r.exec.tick(ctx) // the background loop expires confirmations, not this
		if row := r.row(t, v.ID); row.State != StateInputRequired || row.LeaseUntil != nil {
			t.Fatalf("after a tick the run is %s (lease %v)", row.State, row.LeaseUntil)
		}
		if pending, err := r.exec.Pending(ctx, r.ann); err != nil || len(pending) != 1 || pending[0].RunID != v.ID {
			t.Errorf("ann's pending = %+v, %v", pending, err)
		}
		if others, _ := r.exec.Pending(ctx, r.bea); len(others) != 0 {
			t.Errorf("another tenant's person sees %+v", others)
		}
		if _, err := r.exec.Answer(ctx, r.ann, v.ID, "accept"); switchboard.CodeOf(err) != switchboard.CodeConflict || !strings.Contains(err.Error(), "submit_flow_elicitation") {
			t.Errorf("a confirmation's answer = %v; want conflict naming submit_flow_elicitation", err)
		}
		if _, err := r.exec.Resume(ctx, r.bob, v.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("bob resumes = %v; want not found", err)
		}
		if len(r.up.Requests()) != 0 {
			t.Fatal("the paused run wrote before it was resumed")
		}
		if _, err := r.exec.Resume(ctx, r.ann, v.ID); err != nil {
			t.Fatal(err)
		}
		if end := r.wait(t, r.exec, r.ann, v.ID); end.State != StateCompleted {
			t.Fatalf("resumed run ended %+v", end)
		}
		if _, err := r.exec.Resume(ctx, r.ann, v.ID); switchboard.CodeOf(err) != switchboard.CodeConflict {
			t.Errorf("resuming a finished run = %v; want conflict", err)
		}
	})
}
