package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// wait bounds every wait of these tests.
const wait = 30 * time.Second

// call is one tool call the engine made, held until the test answers it.
type call struct {
	confirmed bool
	tool      string
	args      map[string]any
	ctx       context.Context
	reply     chan reply
}

type reply struct {
	out any
	err error
}

func (c *call) answer(out any, err error) { c.reply <- reply{out, err} }

// fakeCaller hands every call to the test and counts the calls in flight.
type fakeCaller struct {
	calls    chan *call
	inflight atomic.Int64
	max      atomic.Int64
}

func newFakeCaller() *fakeCaller { return &fakeCaller{calls: make(chan *call, 64)} }

func (f *fakeCaller) Execute(ctx context.Context, _ switchboard.Principal, req router.Request) (any, error) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.max.Load()
		if n <= m || f.max.CompareAndSwap(m, n) {
			break
		}
	}
	var args map[string]any
	_ = json.Unmarshal(req.Args, &args)
	c := &call{tool: req.Tool, args: args, ctx: ctx, reply: make(chan reply, 1), confirmed: req.Confirmed}
	f.calls <- c
	select {
	case r := <-c.reply:
		return r.out, r.err
	case <-ctx.Done():
		return nil, &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the call was stopped", Err: ctx.Err()}
	}
}

// next returns the next call the engine makes.
func (f *fakeCaller) next(t *testing.T) *call {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(wait):
		t.Fatalf("no tool call within %s", wait)
		return nil
	}
}

// engineRig is an engine on a real store, a fake caller and the flow tools.
type engineRig struct {
	eng    *Engine
	caller *fakeCaller
	store  *Store
	p      switchboard.Principal
	waits  chan struct{}
	backs  chan time.Duration
}

func newEngineRig(t *testing.T) *engineRig {
	t.Helper()
	db := testdb.SQLite(t)
	a, _ := twoTenants(t, db)
	var hook flowHook
	cat := staticCatalog{reg: flowRegistry(t, &hook), conns: []router.ConnectionRef{{ID: "con_main", Label: "main", Account: "main"}}, tenant: a}
	r := &engineRig{caller: newFakeCaller(), store: NewStore(db, newKeyring(t)), p: switchboard.Principal{TenantID: a, Kind: switchboard.PrincipalUser, UserID: "usr_1"},
		waits: make(chan struct{}, 256), backs: make(chan time.Duration, 64)}
	r.eng = NewEngine(EngineOptions{Store: r.store, Caller: r.caller, Catalog: cat})
	r.eng.waiting = func() { r.waits <- struct{}{} }
	r.eng.after = func(d time.Duration) <-chan time.Time {
		r.backs <- d
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	return r
}

type outcome struct {
	res *Result
	err error
}

// start runs the workflow in the background; the channel gets its end.
func (r *engineRig) start(ctx context.Context, t *testing.T, src, params string, runID string) <-chan outcome {
	t.Helper()
	def, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(def)
	if params == "" {
		params = "{}"
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := r.eng.Execute(ctx, Run{ID: runID, Principal: r.p, Input: RunInput{Workflow: def.Name, Definition: raw, Params: json.RawMessage(params)}})
		done <- outcome{res, err}
	}()
	return done
}

func finish(t *testing.T, done <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(wait):
		t.Fatalf("the workflow did not end within %s", wait)
		return outcome{}
	}
}

func TestGraphOrder(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	src := `
name: diamond
steps:
  - {name: a, tool: flow_read, args: {key: start}}
  - {name: b, tool: flow_read, needs: [a], args: {key: "b-${{ steps.a.output.value }}"}}
  - {name: c, tool: flow_read, needs: [a], args: {key: "c-${{ steps.a.output.value }}"}}
  - {name: d, tool: flow_write, needs: [b, c], args: {text: "${{ steps.b.output.value }}+${{ steps.c.output.value }}"}}
outputs: {joined: "${{ steps.d.output.id }}"}
`
	done := r.start(context.Background(), t, src, "", "run_graph")
	first := r.caller.next(t)
	if first.args["key"] != "start" {
		t.Fatalf("first call %s %v, want a", first.tool, first.args)
	}
	first.answer(map[string]any{"value": "A", "items": []string{}, "count": 0}, nil)
	// b and c run side by side, each with a's output.
	got := []string{}
	var bc []*call
	for range 2 {
		c := r.caller.next(t)
		got = append(got, c.args["key"].(string))
		bc = append(bc, c)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "b-A,c-A" {
		t.Fatalf("second wave = %v", got)
	}
	for _, c := range bc {
		c.answer(map[string]any{"value": strings.ToUpper(c.args["key"].(string)[:1]), "items": []string{}, "count": 0}, nil)
	}
	d := r.caller.next(t)
	if d.tool != "flow_write" || d.args["text"] != "B+C" {
		t.Fatalf("d = %s %v", d.tool, d.args)
	}
	d.answer(map[string]any{"id": "n1"}, nil)
	o := finish(t, done)
	if o.err != nil || o.res.Status != "success" || o.res.Outputs["joined"] != "n1" || o.res.StepsCompleted != 4 {
		t.Fatalf("result %+v, %v", o.res, o.err)
	}
	// Each step's input and output were recorded, sealed.
	recs, err := r.store.Steps(context.Background(), r.p.TenantID, "run_graph")
	if err != nil || len(recs) != 4 {
		t.Fatalf("records %v, %v", recs, err)
	}
	for _, rec := range recs {
		in, _ := r.store.Input(context.Background(), &rec)
		out, _ := r.store.Output(context.Background(), &rec)
		if rec.State != StepCompleted || len(in) == 0 || len(out) == 0 {
			t.Fatalf("record %s: %s in %s out %s", rec.Step, rec.State, in, out)
		}
	}
}

func TestParallelBoundHolds(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	var steps []string
	for i := range 5 {
		steps = append(steps, fmt.Sprintf("  - {name: s%d, tool: flow_read, args: {key: k%d}}", i, i))
	}
	src := "name: wide\nparallel_limit: 2\nsteps:\n" + strings.Join(steps, "\n") + "\n"
	done := r.start(context.Background(), t, src, "", "run_wide")
	held := []*call{r.caller.next(t), r.caller.next(t)}
	// The other three wait for the bound, not for the test.
	for i := range 3 {
		select {
		case <-r.waits:
		case <-time.After(wait):
			t.Fatalf("only %d calls wait for the parallel bound", i)
		}
	}
	if n := r.caller.inflight.Load(); n != 2 {
		t.Fatalf("%d calls in flight, want 2", n)
	}
	ok := map[string]any{"value": "v", "items": []string{}, "count": 0}
	for _, c := range held {
		c.answer(ok, nil)
	}
	for range 3 {
		r.caller.next(t).answer(ok, nil)
	}
	if o := finish(t, done); o.err != nil || o.res.StepsCompleted != 5 {
		t.Fatalf("result %+v, %v", o.res, o.err)
	}
	if m := r.caller.max.Load(); m != 2 {
		t.Fatalf("at most %d calls were in flight, want 2", m)
	}
}

func TestIfSkipsAndForeachFansOut(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	src := `
name: fan
parameters: {type: object, properties: {go: {type: boolean}}}
steps:
  - {name: list, tool: flow_read, args: {key: all}}
  - name: skipped
    tool: flow_write
    needs: [list]
    if: ${{ !params.go }}
    args: {text: never}
  - name: each
    tool: flow_write
    needs: [list]
    if: ${{ params.go && steps.list.output.count > 0 }}
    foreach: ${{ steps.list.output.items }}
    args: {text: "${{ string(index) }}:${{ item }}"}
outputs:
  ids: ${{ steps.each.output.map(o, o.id) }}
  skipped: ${{ steps.skipped.status }}
`
	done := r.start(context.Background(), t, src, `{"go":true}`, "run_fan")
	r.caller.next(t).answer(map[string]any{"value": "", "items": []string{"x", "y", "z"}, "count": 3}, nil)
	seen := map[string]*call{}
	for range 3 {
		c := r.caller.next(t)
		if c.tool != "flow_write" {
			t.Fatalf("call %s %v: the skipped step ran", c.tool, c.args)
		}
		seen[c.args["text"].(string)] = c
	}
	for _, k := range []string{"0:x", "1:y", "2:z"} {
		c := seen[k]
		if c == nil {
			t.Fatalf("items called %v, want 0:x 1:y 2:z", seen)
		}
		c.answer(map[string]any{"id": "id-" + k[2:]}, nil)
	}
	o := finish(t, done)
	if o.err != nil {
		t.Fatal(o.err)
	}
	if got, _ := json.Marshal(o.res.Outputs); string(got) != `{"ids":["id-x","id-y","id-z"],"skipped":"skipped"}` {
		t.Fatalf("outputs = %s", got)
	}
	recs, _ := r.store.Steps(context.Background(), r.p.TenantID, "run_fan")
	items := 0
	for _, rec := range recs {
		if rec.Step == "each" && rec.Item >= 0 {
			items++
		}
	}
	if items != 3 {
		t.Fatalf("%d item records, want 3", items)
	}
}

func TestRetriesOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	src := `
name: retrying
steps:
  - name: flaky
    tool: flow_read
    args: {key: k}
    on_error: retry
    retry: {attempts: 3, backoff: 2s}
  - {name: write, tool: flow_write, needs: [flaky], args: {text: t}}
`
	done := r.start(context.Background(), t, src, "", "run_retry")
	down := &switchboard.Error{Code: switchboard.CodeUpstream, Message: "flow answered 503"}
	r.caller.next(t).answer(nil, down)
	r.caller.next(t).answer(nil, down)
	r.caller.next(t).answer(map[string]any{"value": "v", "items": []string{}, "count": 0}, nil)
	// The write fails once and is not tried again: the workflow fails.
	r.caller.next(t).answer(nil, down)
	o := finish(t, done)
	if o.err == nil || !strings.Contains(o.err.Error(), "step write (flow_write) failed") {
		t.Fatalf("err = %v, want the write's failure", o.err)
	}
	select {
	case c := <-r.caller.calls:
		t.Fatalf("an extra call %s after the write failed", c.tool)
	default:
	}
	if b1, b2 := testwait.Recv(t, r.backs, "the first backoff"), testwait.Recv(t, r.backs, "the second backoff"); b1 != 2*time.Second || b2 != 4*time.Second {
		t.Fatalf("backoffs %s, %s; want 2s, 4s", b1, b2)
	}
	recs, _ := r.store.Steps(context.Background(), r.p.TenantID, "run_retry")
	for _, rec := range recs {
		want := map[string]int{"flaky": 3, "write": 1}[rec.Step]
		if rec.Attempts != want {
			t.Fatalf("%s took %d attempts, want %d", rec.Step, rec.Attempts, want)
		}
	}
	// A save refuses retry on a tool that is neither read-only nor idempotent.
	def, _ := Parse([]byte(strings.Replace(src, "tool: flow_read", "tool: flow_write", 1)))
	prog, err := Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), prog, r.eng.catalog, r.p); !strings.Contains(fmt.Sprint(err), "retry is only for read-only or idempotent") {
		t.Fatalf("check = %v", err)
	}
}

func TestContinueMakesPartial(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	src := `
name: partial
steps:
  - {name: try, tool: flow_write, on_error: continue, args: {text: t}}
  - {name: after, tool: flow_read, needs: [try], args: {key: "${{ steps.try.status }}"}}
`
	done := r.start(context.Background(), t, src, "", "run_partial")
	r.caller.next(t).answer(nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "no"})
	c := r.caller.next(t)
	if c.args["key"] != "failed" {
		t.Fatalf("after saw %v", c.args)
	}
	c.answer(map[string]any{"value": "v", "items": []string{}, "count": 0}, nil)
	o := finish(t, done)
	if o.err != nil || o.res.Status != "partial" || o.res.StepsCompleted != 1 || o.res.StepResults[0].ErrorMessage != "no" {
		t.Fatalf("result %+v, %v", o.res, o.err)
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	t.Run("step", func(t *testing.T) {
		t.Parallel()
		r := newEngineRig(t)
		done := r.start(context.Background(), t, "name: slow\nsteps:\n  - {name: s, tool: flow_read, timeout: 50ms, args: {key: k}}\n", "", "run_step_timeout")
		c := r.caller.next(t)
		select {
		case <-c.ctx.Done(): // the engine stopped it: the test never answers
		case <-time.After(wait):
			t.Fatal("the step's call was not stopped by its timeout")
		}
		o := finish(t, done)
		if o.err == nil || !strings.Contains(o.err.Error(), "longer than its timeout (50ms)") {
			t.Fatalf("err = %v", o.err)
		}
	})
	t.Run("workflow", func(t *testing.T) {
		t.Parallel()
		r := newEngineRig(t)
		done := r.start(context.Background(), t, "name: slow\ntimeout: 50ms\nsteps:\n  - {name: s, tool: flow_read, args: {key: k}}\n  - {name: t, tool: flow_read, needs: [s], args: {key: k}}\n", "", "run_wf_timeout")
		c := r.caller.next(t)
		select {
		case <-c.ctx.Done():
		case <-time.After(wait):
			t.Fatal("the call was not stopped by the workflow's timeout")
		}
		o := finish(t, done)
		if o.err == nil || !strings.Contains(o.err.Error(), "workflow took longer than its timeout (50ms)") {
			t.Fatalf("err = %v", o.err)
		}
		if len(r.caller.calls) != 0 {
			t.Fatal("a step started after the timeout")
		}
	})
}

func TestCancelStopsInFlightAndStartsNoMore(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := `
name: cancel
steps:
  - {name: a, tool: flow_read, args: {key: a}}
  - {name: b, tool: flow_read, args: {key: b}}
  - {name: c, tool: flow_write, needs: [a, b], args: {text: c}}
`
	done := r.start(ctx, t, src, "", "run_cancel")
	a, b := r.caller.next(t), r.caller.next(t)
	if a.args["key"] != "a" { // a and b start side by side, in either order
		a, b = b, a
	}
	a.answer(map[string]any{"value": "v", "items": []string{}, "count": 0}, nil)
	cancel()
	select {
	case <-b.ctx.Done():
	case <-time.After(wait):
		t.Fatal("the call in flight was not stopped")
	}
	o := finish(t, done)
	if switchboard.CodeOf(o.err) != switchboard.CodeCanceled {
		t.Fatalf("err = %v, want canceled", o.err)
	}
	if len(r.caller.calls) != 0 {
		t.Fatal("a step started after the cancel")
	}
	recs, _ := r.store.Steps(context.Background(), r.p.TenantID, "run_cancel")
	states := map[string]StepState{}
	for _, rec := range recs {
		states[rec.Step] = rec.State
	}
	if states["a"] != StepCompleted || states["b"] != StepCanceled || states["c"] != "" {
		t.Fatalf("step states %v", states)
	}
}

func TestResumeRerunsOnlyWhatMayRunTwice(t *testing.T) {
	t.Parallel()
	src := `
name: resume
steps:
  - {name: a, tool: flow_read, args: {key: a}}
  - {name: b, tool: %s, needs: [a], args: {%s}}
  - {name: c, tool: flow_read, needs: [b], args: {key: "${{ steps.a.output.value }}"}}
`
	for _, tc := range []struct {
		name, tool, args string
		rerun            bool
	}{
		{"idempotent step in flight runs again", "flow_remove", "id: x", true},
		{"write in flight fails the run", "flow_write", "text: x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newEngineRig(t)
			def := fmt.Sprintf(src, tc.tool, tc.args)
			// The first process: a completes, b is in flight when it dies.
			ctx, die := context.WithCancel(context.Background())
			done := r.start(ctx, t, def, "", "run_resume")
			r.caller.next(t).answer(map[string]any{"value": "A", "items": []string{}, "count": 0}, nil)
			b := r.caller.next(t)
			if b.tool != tc.tool {
				t.Fatalf("second call %s", b.tool)
			}
			die()
			finish(t, done)
			// What a dead process leaves: b's record still says running.
			if err := r.store.db.Model(&StepRecord{}).Where("run_id = ? AND step = ?", "run_resume", "b").
				Updates(map[string]any{"state": StepRunning, "finished_at": nil}).Error; err != nil {
				t.Fatal(err)
			}
			done = r.start(context.Background(), t, def, "", "run_resume")
			if !tc.rerun {
				o := finish(t, done)
				if o.err == nil || switchboard.CodeOf(o.err) != switchboard.CodeOutcomeUnknown || !strings.Contains(o.err.Error(), "step b (flow_write)") {
					t.Fatalf("err = %v, want the interrupted write named", o.err)
				}
				if len(r.caller.calls) != 0 {
					t.Fatal("a step ran after the interrupted write")
				}
				return
			}
			again := r.caller.next(t)
			if again.tool != tc.tool {
				t.Fatalf("resumed with %s, want b again (a completed before)", again.tool)
			}
			again.answer(map[string]any{"removed": true}, nil)
			c := r.caller.next(t)
			if c.args["key"] != "A" {
				t.Fatalf("c saw %v, want a's recorded output", c.args)
			}
			c.answer(map[string]any{"value": "v", "items": []string{}, "count": 0}, nil)
			if o := finish(t, done); o.err != nil || o.res.StepsCompleted != 3 {
				t.Fatalf("resumed result %+v, %v", o.res, o.err)
			}
		})
	}
}
