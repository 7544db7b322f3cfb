package workflows

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestRunResumesOnAnotherNode stops the node running a workflow while its second step
// is in flight; another node takes the run over when its lease runs out and resumes
// it at that step (read-only, so it runs again), with the first step's recorded output.
func TestRunResumesOnAnotherNode(t *testing.T) {
	t.Parallel()
	svc, fr, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	src := `
name: two
steps:
  - {name: first, tool: flow_read, args: {key: one}}
  - {name: second, tool: flow_read, needs: [first], args: {key: "${{ steps.first.output.value }}"}}
outputs: {last: "${{ steps.second.output.value }}"}
`
	def, _ := Parse([]byte(src))
	if _, _, err := svc.Create(ctx, r.p, def, src, false); err != nil {
		t.Fatal(err)
	}
	store := runs.NewStore(r.store.db, newKeyring(t))
	reg := providers.NewRegistry()
	if err := reg.Register(svc.Spec()); err != nil {
		t.Fatal(err)
	}
	hub := &Hub{Router: fr, Engine: r.eng, Registry: reg}
	node := func(name string) *runs.Executor {
		e := runs.NewExecutor(runs.Options{Store: store, Runner: hub, RunTimeout: time.Minute, Lease: 300 * time.Millisecond, Node: name})
		t.Cleanup(func() {
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e.Close(c)
		})
		return e
	}
	a := node("node-a")
	svc.Runs = a
	v, err := svc.Start(ctx, r.p, "two", json.RawMessage(`{}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.caller.next(t).answer(map[string]any{"value": "from-first", "items": []string{}, "count": 0}, nil)
	inflight := r.caller.next(t)
	// Node A stops with the second step in flight: its call is cut, the run stays
	// working under A's lease, which nobody renews.
	stopped, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	a.Close(stopped)
	cancel()
	select {
	case <-inflight.ctx.Done():
	case <-time.After(wait):
		t.Fatal("node A's call was not stopped")
	}
	b := node("node-b")
	bctx, stopB := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); b.Run(bctx) }()
	defer func() {
		stopB()
		<-ran // b's loop ends before the database closes
	}()
	again := r.caller.next(t)
	if again.args["key"] != "from-first" {
		t.Fatalf("node B resumed with %v, want the second step with the first's recorded output", again.args)
	}
	again.answer(map[string]any{"value": "done", "items": []string{}, "count": 0}, nil)
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	end, err := b.Wait(wctx, r.p, v.ID, 20*time.Millisecond)
	if err != nil || end.State != runs.StateCompleted {
		t.Fatalf("run ended %+v, %v", end, err)
	}
	var res Result
	if err := json.Unmarshal(end.Output, &res); err != nil || res.Outputs["last"] != "done" {
		t.Fatalf("output %s", end.Output)
	}
	if len(r.caller.calls) != 0 {
		t.Fatal("the first step ran again")
	}
}
