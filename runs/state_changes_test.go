package runs

import (
	"context"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// heard collects the state changes OnStateChange reports.
type heard struct {
	mu  sync.Mutex
	got map[string][]switchboard.TenantID
}

func (h *heard) add(tenant switchboard.TenantID, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[id] = append(h.got[id], tenant)
}

func (h *heard) count(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.got[id])
}

// TestStateChangesReachTheFeed: every change of a run's state stored by one node
// reaches the subscribers of another node's OnStateChange, with the run's tenant: a
// confirmed run's start and end, a cancellation, a declined confirmation. Its
// creation is no change, and a cancel of a run that had ended changes nothing.
func TestStateChangesReachTheFeed(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		feed := events.NewLocal("")
		r := newRig(t, db, func(o *Options) { o.Node = "node_b"; o.Feed = feed })
		h := &heard{got: map[string][]switchboard.TenantID{}}
		stop := OnStateChange(feed, h.add)
		t.Cleanup(stop)
		ctx := context.Background()
		r.policy.set(r.ann, router.Policy{Confirm: router.ConfirmAlways})

		confirmed, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: []byte(`{"text":"x"}`)})
		if err != nil || confirmed.State != StateInputRequired {
			t.Fatalf("start = %+v, %v; want input_required", confirmed, err)
		}
		declined, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: []byte(`{"text":"y"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if h.count(confirmed.ID)+h.count(declined.ID) != 0 {
			t.Fatalf("a run's creation was reported as a change: %v", h.got)
		}
		if _, err := r.exec.Answer(ctx, r.ann, confirmed.ID, "accept"); err != nil {
			t.Fatal(err)
		}
		if v := r.wait(t, r.exec, r.ann, confirmed.ID); v.State != StateCompleted {
			t.Fatalf("confirmed run = %s", v.State)
		}
		testwait.Until(t, "the confirmed run's start and end on the feed", func() bool { return h.count(confirmed.ID) == 2 })
		if _, err := r.exec.Answer(ctx, r.ann, declined.ID, "decline"); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, "the declined run's end on the feed", func() bool { return h.count(declined.ID) == 1 })

		r.policy.set(r.bea, router.Policy{Confirm: router.ConfirmNever})
		waiting, err := r.exec.Start(ctx, r.bea, Call{Tool: "notes_wait", ConnectionID: r.connB})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.exec.Cancel(ctx, r.bea, waiting.ID); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, "the canceled run on the feed", func() bool { return h.count(waiting.ID) == 1 })
		if _, err := r.exec.Cancel(ctx, r.bea, waiting.ID); err == nil {
			t.Error("a second cancel of an ended run was not refused")
		}
		r.wait(t, r.exec, r.bea, waiting.ID)
		h.mu.Lock()
		defer h.mu.Unlock()
		if n := len(h.got[waiting.ID]); n != 1 || h.got[waiting.ID][0] != r.bea.TenantID {
			t.Errorf("the canceled run was reported %v; want once, in bea's tenant", h.got[waiting.ID])
		}
		if h.got[confirmed.ID][0] != r.ann.TenantID {
			t.Errorf("the confirmed run was reported in %v", h.got[confirmed.ID])
		}
	})
}
