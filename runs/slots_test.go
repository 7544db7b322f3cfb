package runs

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/redistest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/limits"
)

// refusals is a limits.Slots that reports each refused Acquire.
type refusals struct {
	limits.Slots
	refused chan string
}

func (s refusals) Acquire(ctx context.Context, key, holder string, max int, ttl time.Duration) bool {
	ok := s.Slots.Acquire(ctx, key, holder, max, ttl)
	if !ok {
		select {
		case s.refused <- holder:
		default:
		}
	}
	return ok
}

// TestTenantBoundIsSharedByTheFleet runs two executors (two nodes) whose slots are
// shared through one redis-server: the tenant's bound of two executing runs holds for
// the fleet, so node B's runs wait while node A's two execute, and run once they end.
func TestTenantBoundIsSharedByTheFleet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		prefix := "test:" + t.Name() + ":"
		slots := func() limits.Slots {
			r, err := limits.NewRedis(limits.RedisOptions{URL: srv.URL, Prefix: prefix, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			return r
		}
		r := newRig(t, db, func(o *Options) { o.Node = "node_a"; o.MaxPerTenant = 2; o.Slots = slots() })
		waitingB := refusals{Slots: slots(), refused: make(chan string, 16)}
		b := r.newExecutor(t, func(o *Options) { o.Node = "node_b"; o.MaxPerTenant = 2; o.Slots = waitingB })
		ctx := context.Background()
		var onA, onB []string
		for range 2 {
			v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_wait", ConnectionID: r.connA})
			if err != nil {
				t.Fatal(err)
			}
			onA = append(onA, v.ID)
		}
		received(t, r, 2)
		for range 2 {
			v, err := b.Start(ctx, r.bob, Call{Tool: "notes_wait", ConnectionID: r.connA})
			if err != nil {
				t.Fatal(err)
			}
			onB = append(onB, v.ID)
		}
		// Both of B's runs were refused a slot: the tenant's two are A's.
		seen := map[string]bool{}
		for len(seen) < 2 {
			select {
			case id := <-waitingB.refused:
				seen[id] = true
			case <-time.After(30 * time.Second):
				t.Fatalf("node B's runs were not refused a slot (refused: %v): the bound is not shared", seen)
			}
		}
		select {
		case <-r.up.Waiting():
			t.Fatal("a third run reached the upstream while the tenant's two slots were held on node A")
		default:
		}
		for _, id := range onB {
			if row := r.row(t, id); row.Attempts != 0 || row.StartedAt != nil || row.State != StateWorking {
				t.Errorf("node B's run %s: attempts %d, started %v, state %s; want waiting", id, row.Attempts, row.StartedAt, row.State)
			}
		}
		r.up.Release()
		for _, id := range onA {
			if got := r.wait(t, r.exec, r.ann, id); got.State != StateCompleted {
				t.Errorf("node A's run %s is %s, want completed", id, got.State)
			}
		}
		for _, id := range onB {
			if got := r.wait(t, b, r.bob, id); got.State != StateCompleted {
				t.Errorf("node B's run %s is %s, want completed", id, got.State)
			}
		}
	})
}
