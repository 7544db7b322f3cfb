package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// TestConfirmPolicyHoldsForRuns: under a destructive policy the router refuses an
// unconfirmed call of a destructive tool whoever sends it, a run of it waits
// input_required instead of executing, and once accepted it runs (confirmed) exactly
// once; each step leaves its audit row.
func TestConfirmPolicyHoldsForRuns(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		r.policy.set(r.ann, router.Policy{Confirm: router.ConfirmDestructive})
		id := r.up.Put("keep until confirmed")
		del := Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + id + `"}`)}

		_, err := r.router.Execute(ctx, r.ann, router.Request{Tool: del.Tool, ConnectionID: del.ConnectionID, Args: del.Args})
		wantCode(t, err, switchboard.CodeConfirmationRequired, "")
		v, err := r.exec.Start(ctx, r.ann, del)
		if err != nil {
			t.Fatal(err)
		}
		if v.State != StateInputRequired || v.Elicitation == nil || !r.up.Has(id) {
			t.Fatalf("started run = %+v, note kept %v; want input_required and the note kept", v, r.up.Has(id))
		}
		// Bob's policy is his own: the same call of his runs at once.
		idBob := r.up.Put("bob's")
		vb, err := r.exec.Start(ctx, r.bob, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + idBob + `"}`)})
		if err != nil || vb.State != StateWorking {
			t.Fatalf("bob's run = %+v, %v; want working", vb, err)
		}
		r.wait(t, r.exec, r.bob, vb.ID)

		if _, err := r.exec.Answer(ctx, r.ann, v.ID, "accept"); err != nil {
			t.Fatal(err)
		}
		if got := r.wait(t, r.exec, r.ann, v.ID); got.State != StateCompleted || r.up.Has(id) {
			t.Errorf("accepted run = %+v, note kept %v", got, r.up.Has(id))
		}
		want := []string{
			"tool_call confirmation_required notes_delete_note " + r.ann.ID(),
			"confirmation_asked ok notes_delete_note " + r.ann.ID(),
			"tool_call ok notes_delete_note " + r.bob.ID(),
			"confirmation_accepted ok notes_delete_note " + r.ann.ID(),
			"tool_call ok notes_delete_note " + r.ann.ID(),
		}
		if diff := cmp.Diff(want, r.audit.kinds()); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
		deletes := 0
		for _, req := range r.up.Requests() {
			if req.Method == "DELETE" {
				deletes++
			}
		}
		if deletes != 2 {
			t.Errorf("%d DELETEs reached the upstream, want 2 (bob's, and ann's once accepted)", deletes)
		}
	})
}

// TestRunsCanceledBeforeExecutingLeaveTheirRow: a run canceled while it waits for its
// tenant's slot never reaches the router, and still leaves one tool_call row,
// canceled; one canceled while it waits for its confirmation ends that confirmation.
func TestRunsCanceledBeforeExecutingLeaveTheirRow(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.MaxPerTenant = 1 })
		ctx := context.Background()
		holder, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
		if err != nil {
			t.Fatal(err)
		}
		testwait.Recv(t, r.up.Waiting(), "the holding run to reach the upstream")
		queued, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.exec.Cancel(ctx, r.ann, queued.ID); err != nil {
			t.Fatal(err)
		}
		r.policy.set(r.ann, router.Policy{Confirm: router.ConfirmAlways})
		asked, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)})
		if err != nil || asked.State != StateInputRequired {
			t.Fatalf("run under always = %+v, %v", asked, err)
		}
		if _, err := r.exec.Cancel(ctx, r.ann, asked.ID); err != nil {
			t.Fatal(err)
		}
		r.up.Release()
		r.wait(t, r.exec, r.ann, holder.ID)
		want := []string{
			"tool_call canceled notes_get_note " + r.ann.ID(),
			"confirmation_asked ok notes_get_note " + r.ann.ID(),
			"confirmation_declined ok notes_get_note " + r.ann.ID(),
			"tool_call ok notes_wait " + r.ann.ID(),
		}
		// The queued run's row is left by its goroutine once it sees the cancel.
		testwait.Until(t, fmt.Sprintf("%d audit rows", len(want)), func() bool {
			r.exec.Wait(ctx, r.ann, queued.ID, 0)
			return len(r.audit.kinds()) >= len(want)
		})
		got := r.audit.kinds()
		slices.Sort(want)
		slices.Sort(got) // the goroutines record in their own order
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}
