package workflows

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"gorm.io/gorm"
)

const scheduledDef = `
name: nightly
parameters: {type: object, properties: {key: {type: string}}}
triggers:
  - schedule: "*/5 * * * *"
    params: {key: scheduled}
steps:
  - {name: read, tool: flow_read, args: {key: "${{ params.key }}"}}
`

// savedNightly saves the scheduled workflow nightly in a new SQLite database.
func savedNightly(t *testing.T) (*gorm.DB, *Store, *Workflow) {
	t.Helper()
	db := testdb.SQLite(t)
	ten, _ := twoTenants(t, db)
	store := NewStore(db, newKeyring(t))
	def, err := Parse([]byte(scheduledDef))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(def)
	w := &Workflow{Name: "nightly", Definition: string(raw), Source: scheduledDef, CreatedBy: "user:usr_1", Scheduled: true}
	if _, err := store.Save(context.Background(), ten, w, false); err != nil {
		t.Fatal(err)
	}
	return db, store, w
}

func TestScheduleFiresOnceAcrossNodes(t *testing.T) {
	t.Parallel()
	_, store, w := savedNightly(t)
	saved := w.UpdatedAt
	var started atomic.Int64
	var mu sync.Mutex
	var params []string
	start := func(_ context.Context, got Workflow, p json.RawMessage) error {
		if got.Name != "nightly" {
			t.Errorf("started %s", got.Name)
		}
		started.Add(1)
		mu.Lock()
		params = append(params, string(p))
		mu.Unlock()
		return nil
	}
	nodes := []*Scheduler{{Store: store, Start: start}, {Store: store, Start: start}}
	// The first firing after the save, and 30 s past it.
	next := saved.Truncate(5 * time.Minute).Add(5 * time.Minute)
	// Both nodes tick at the same moment (one after the other: SQLite has one writer;
	// the unique key, not the order, decides who starts the run).
	tick := func(now time.Time) {
		for _, n := range nodes {
			if _, err := n.Tick(context.Background(), now); err != nil {
				t.Fatal(err)
			}
		}
	}
	tick(next.Add(-time.Second))
	if n := started.Load(); n != 0 {
		t.Fatalf("%d runs before the first firing", n)
	}
	tick(next.Add(30 * time.Second))
	if n := started.Load(); n != 1 {
		t.Fatalf("%d runs for one firing on two nodes, want 1", n)
	}
	tick(next.Add(time.Minute)) // the same firing again: nothing
	tick(next.Add(5*time.Minute + time.Second))
	if n := started.Load(); n != 2 {
		t.Fatalf("%d runs after the second firing, want 2", n)
	}
	if params[0] != `{"key":"scheduled"}` {
		t.Fatalf("params %v", params)
	}
}

// TestShutdownDoesNotCutAFiring: shutdown arrives while a claimed firing's run starts.
// The run still starts (its claim is final: no node will claim that firing again), and
// no firing is claimed after it. In CI a node stopped between claiming a firing and
// starting its run, and that firing was lost.
func TestShutdownDoesNotCutAFiring(t *testing.T) {
	t.Parallel()
	db, store, w := savedNightly(t)
	ctx, shutdown := context.WithCancel(context.Background())
	var starts []error
	node := &Scheduler{Store: store, Start: func(runCtx context.Context, _ Workflow, _ json.RawMessage) error {
		shutdown() // the node is told to stop while this run starts
		starts = append(starts, runCtx.Err())
		return runCtx.Err()
	}}
	// Three firings are due; the first one's start meets the shutdown.
	due := w.UpdatedAt.Truncate(5 * time.Minute).Add(15*time.Minute + time.Second)
	n, err := node.Tick(ctx, due)
	if err != nil || n != 1 || len(starts) != 1 || starts[0] != nil {
		t.Fatalf("Tick = %d, %v; the starts saw %v: want one run started, under a context shutdown does not end", n, err, starts)
	}
	var claimed int64
	if err := db.Model(&Firing{}).Count(&claimed).Error; err != nil || claimed != 1 {
		t.Fatalf("%d firings claimed (%v), want 1: a firing claimed after the shutdown would start no run", claimed, err)
	}
}

func TestTriggersAreChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, from, to, field, says string }{
		{"bad cron", `"*/5 * * * *"`, `"every day"`, "triggers[0].schedule", "not a cron schedule"},
		{"params that do not fit", "params: {key: scheduled}", "params: {key: 7}", "triggers[0].params.key", "string"},
		{"two kinds", "    params: {key: scheduled}", "    params: {key: scheduled}\n    github: {events: [push]}", "triggers[0]", "exactly one"},
		{"expressions in params", "params: {key: scheduled}", `params: {key: "${{ 1 }}"}`, "triggers[0].params", "literal"},
		{"unknown field", "    params: {key: scheduled}", "    parms: {key: scheduled}", "triggers[0].parms", "did you mean params"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			def, err := Parse([]byte(strings.Replace(scheduledDef, tc.from, tc.to, 1)))
			if err == nil {
				_, err = Compile(def)
			}
			for _, p := range ProblemsOf(err) {
				if p.Field == tc.field && strings.Contains(p.Message, tc.says) {
					return
				}
			}
			t.Fatalf("no problem at %s saying %q: %v", tc.field, tc.says, err)
		})
	}
}

// TestSchedulesFireAtMostOnceAMinute saves schedules: one that fires more often than
// once a minute is refused naming the field, and nothing is stored; once a minute or
// less often is saved; a deployment's lower minimum lets @every 1s through.
func TestSchedulesFireAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schedule string
		min            time.Duration
		wantProblem    string // "" when saved
	}{
		{name: "every second", schedule: `"@every 1s"`, wantProblem: "fires every 1s: a schedule may fire at most once every 1m0s (@every 1m0s or longer)"},
		{name: "just under a minute", schedule: `"@every 59s"`, wantProblem: "fires every 59s"},
		{name: "every minute by cron", schedule: `"* * * * *"`},
		{name: "every minute", schedule: `"@every 1m"`},
		{name: "every 90 seconds", schedule: `"@every 90s"`},
		{name: "hourly", schedule: `"@hourly"`},
		{name: "every second where the deployment allows it", schedule: `"@every 1s"`, min: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
			svc.MinScheduleInterval = tt.min
			def, err := Parse([]byte(strings.Replace(scheduledDef, `"*/5 * * * *"`, tt.schedule, 1)))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = svc.Create(context.Background(), r.p, def, "", false)
			if tt.wantProblem == "" {
				if err != nil {
					t.Fatalf("schedule %s: %v", tt.schedule, err)
				}
				return
			}
			problems := ProblemsOf(err)
			if len(problems) != 1 || problems[0].Field != "triggers[0].schedule" || !strings.Contains(problems[0].Message, tt.wantProblem) {
				t.Fatalf("schedule %s: %v; want a problem at triggers[0].schedule saying %q", tt.schedule, err, tt.wantProblem)
			}
			if _, err := svc.Store.Get(context.Background(), r.p.TenantID, def.Name); switchboard.CodeOf(err) != switchboard.CodeNotFound {
				t.Errorf("a refused schedule was stored: %v", err)
			}
		})
	}
}

// TestSchedulerSkipsSchedulesTooFrequent: a schedule saved before the minimum that
// fires every second starts no run, unless the deployment allows it.
func TestSchedulerSkipsSchedulesTooFrequent(t *testing.T) {
	t.Parallel()
	db, store, w := savedNightly(t)
	def, _ := Parse([]byte(strings.Replace(scheduledDef, `"*/5 * * * *"`, `"@every 1s"`, 1)))
	raw, _ := json.Marshal(def)
	if err := db.Model(&Workflow{}).Where("id = ?", w.ID).Update("definition", string(raw)).Error; err != nil {
		t.Fatal(err)
	}
	var started atomic.Int64
	start := func(context.Context, Workflow, json.RawMessage) error { started.Add(1); return nil }
	now := w.UpdatedAt.Add(10 * time.Second)
	if _, err := (&Scheduler{Store: store, Start: start}).Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("a schedule of every second started %d runs, want none", n)
	}
	if _, err := (&Scheduler{Store: store, Start: start, MinInterval: time.Second}).Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if n := started.Load(); n == 0 {
		t.Fatal("where every second is allowed, the schedule started no run")
	}
}

func TestTriggeredRunsRunAsTheSaver(t *testing.T) {
	t.Parallel()
	svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(scheduledDef))
	agent := switchboard.Principal{TenantID: r.p.TenantID, Kind: switchboard.PrincipalAgent, AgentID: "agt_1"}
	if _, _, err := svc.Create(ctx, agent, def, "", false); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Fatalf("an agent saved a workflow with triggers: %v", err)
	}
	w, _, err := svc.Create(ctx, r.p, def, "", false)
	if err != nil || !w.Scheduled {
		t.Fatalf("create = %+v, %v", w, err)
	}
	svc.User = func(_ context.Context, tenant switchboard.TenantID, id string) (switchboard.Principal, error) {
		if tenant != r.p.TenantID || id != r.p.UserID {
			return switchboard.Principal{}, switchboard.NotFound("user")
		}
		return r.p, nil
	}
	if err := svc.StartAs(ctx, w, json.RawMessage(`{"key":"from-trigger"}`)); err != nil {
		t.Fatal(err)
	}
	c := r.caller.next(t)
	if c.args["key"] != "from-trigger" {
		t.Fatalf("step got %v", c.args)
	}
	c.answer(map[string]any{"value": "v", "items": []string{}, "count": 0}, nil)
	list, _, err := svc.Runs.List(ctx, r.p, runs.ListOptions{Workflow: "nightly"})
	if err != nil || len(list) != 1 {
		t.Fatalf("the saver's runs: %v, %v", list, err)
	}
	// A saver who left the tenant starts nothing.
	gone := w
	gone.UpdatedBy = "user:usr_gone"
	if err := svc.StartAs(ctx, gone, json.RawMessage(`{}`)); err == nil {
		t.Fatal("a run started as a user who is gone")
	}
}
