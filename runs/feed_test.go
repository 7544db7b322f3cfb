package runs

import (
	"context"
	"encoding/json"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestCancelThroughTheFeedStopsTheRun: a run canceled through another node stops on
// the node executing it as soon as the change feed tells it, without waiting for its
// lease renewal: its slot frees while the upstream still holds the call.
func TestCancelThroughTheFeedStopsTheRun(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		feed := events.NewLocal("")
		r := newRig(t, db, func(o *Options) { o.Node = "node_a"; o.MaxPerTenant = 1; o.Feed = feed })
		other := r.newExecutor(t, func(o *Options) { o.Node = "node_b"; o.Feed = feed })
		ctx := context.Background()
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
		if err != nil {
			t.Fatal(err)
		}
		received(t, r, 1)
		if _, err := other.Cancel(ctx, r.ann, v.ID); err != nil {
			t.Fatal(err)
		}
		done, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n404"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.wait(t, r.exec, r.ann, v.ID); got.State != StateCanceled || got.Output != nil {
			t.Errorf("run = %s %s, want canceled without output", got.State, got.Output)
		}
		if next := r.wait(t, r.exec, r.ann, done.ID); next.State != StateFailed {
			t.Errorf("next run = %s, want failed (not found): it ran once the canceled run's slot freed", next.State)
		}
	})
}
