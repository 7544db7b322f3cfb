package workflows

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// fakeRouter is the engine rig's caller and catalog with a confirm policy.
type fakeRouter struct {
	*fakeCaller
	staticCatalog
	pol router.Policy

	mu            sync.Mutex
	confirmations []string
	ran           []string // the calls recorded through Ran: "tool outcome"
}

func (f *fakeRouter) Prepare(context.Context, switchboard.Principal, router.Request) (router.Prepared, error) {
	return router.Prepared{}, switchboard.NotFound("tool")
}

func (f *fakeRouter) Policy(context.Context, switchboard.Principal) (router.Policy, error) {
	return f.pol, nil
}

func (f *fakeRouter) RecordConfirmation(c router.Confirmation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirmations = append(f.confirmations, string(c.Kind))
}

func (f *fakeRouter) Refused(switchboard.Principal, router.Request, error) {}

func (f *fakeRouter) Ran(_ context.Context, _ switchboard.Principal, req router.Request, _ time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, req.Tool+" "+string(switchboard.CodeOf(err)))
}

func (f *fakeRouter) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ran...)
}

// serviceRig is a Service on a runs executor whose runner is the Hub.
func serviceRig(t *testing.T, pol router.Policy) (*Service, *fakeRouter, *engineRig, *[]switchboard.TenantID) {
	t.Helper()
	r := newEngineRig(t)
	cat := r.eng.catalog.(staticCatalog)
	fr := &fakeRouter{fakeCaller: r.caller, staticCatalog: cat, pol: pol}
	r.eng.caller, r.eng.catalog = fr, fr
	reg := providers.NewRegistry()
	hub := &Hub{Router: fr, Engine: r.eng, Registry: reg}
	exec := runs.NewExecutor(runs.Options{Store: runs.NewStore(r.store.db, newKeyring(t)), Runner: hub, RunTimeout: time.Minute})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		exec.Close(ctx)
	})
	changed := &[]switchboard.TenantID{}
	svc := &Service{Store: r.store, Runs: exec, Router: fr, Changed: func(tn switchboard.TenantID) { *changed = append(*changed, tn) }}
	if err := reg.Register(svc.Spec()); err != nil {
		t.Fatal(err)
	}
	return svc, fr, r, changed
}

const serviceDef = `
name: notes
parameters: {type: object, properties: {key: {type: string}}, required: [key]}
steps:
  - {name: read, tool: flow_read, args: {key: "${{ params.key }}"}}
  - {name: drop, tool: flow_remove, needs: [read], args: {id: "${{ steps.read.output.value }}"}}
outputs: {removed: "${{ steps.drop.output.removed }}"}
`

func TestServiceRunsAWorkflowAsARun(t *testing.T) {
	t.Parallel()
	svc, fr, r, changed := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(serviceDef))
	if _, created, err := svc.Create(ctx, r.p, def, serviceDef, false); err != nil || !created {
		t.Fatalf("create = %v, %v", created, err)
	}
	if len(*changed) != 1 {
		t.Fatalf("changed called %d times", len(*changed))
	}
	if _, err := svc.Start(ctx, r.p, "notes", json.RawMessage(`{}`), StartOptions{}); switchboard.AsError(err).Field != "parameters.key" {
		t.Fatalf("start without key = %v, want parameters.key", err)
	}
	v, err := svc.Start(ctx, r.p, "notes", json.RawMessage(`{"key":"k"}`), StartOptions{})
	if err != nil || v.State != runs.StateWorking || v.Kind != runs.KindWorkflow || v.Workflow != "notes" || v.WorkflowVersion != 1 {
		t.Fatalf("start = %+v, %v", v, err)
	}
	r.caller.next(t).answer(map[string]any{"value": "n1", "items": []string{}, "count": 0}, nil)
	c := r.caller.next(t)
	if c.args["id"] != "n1" {
		t.Fatalf("drop got %v", c.args)
	}
	c.answer(map[string]any{"removed": true}, nil)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	end, err := svc.Runs.Wait(wctx, r.p, v.ID, 10*time.Millisecond)
	if err != nil || end.State != runs.StateCompleted {
		t.Fatalf("run ended %+v, %v", end, err)
	}
	var res Result
	if err := json.Unmarshal(end.Output, &res); err != nil || res.Outputs["removed"] != true || res.StepsCompleted != 2 {
		t.Fatalf("output %s (%v)", end.Output, err)
	}
	st, err := svc.Status(ctx, r.p, v.ID)
	if err != nil || len(st.Steps) != 2 || st.StepsCompleted != 2 || st.StepsTotal != 2 {
		t.Fatalf("status %+v, %v", st, err)
	}
	// Started as a run, it has no call of its tool of its own: its end is recorded as
	// that call, once.
	if got := fr.recorded(); len(got) != 1 || got[0] != "run_flow__notes " {
		t.Errorf("recorded %q; want the run's end recorded once as a call of run_flow__notes", got)
	}
	// Another principal of another tenant sees none of it.
	other := switchboard.Principal{TenantID: "ten_x", Kind: switchboard.PrincipalUser, UserID: "usr_x"}
	if _, err := svc.Status(ctx, other, v.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Fatalf("other tenant's status = %v", err)
	}
	if _, err := svc.Cancel(ctx, other, v.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Fatalf("other tenant's cancel = %v", err)
	}
}

func TestConfirmIsAskedOnceWithTheChanges(t *testing.T) {
	t.Parallel()
	svc, fr, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmDestructive, Approval: router.ApprovalRelay})
	ctx := context.Background()
	def, _ := Parse([]byte(serviceDef))
	if _, _, err := svc.Create(ctx, r.p, def, "", false); err != nil {
		t.Fatal(err)
	}
	v, err := svc.Start(ctx, r.p, "notes", json.RawMessage(`{"key":"k"}`), StartOptions{})
	if err != nil || v.State != runs.StateInputRequired {
		t.Fatalf("start = %+v, %v; want input_required", v, err)
	}
	if v.Elicitation == nil || !strings.Contains(v.Elicitation.Message, "drop: Remove (flow_remove) on main, may delete") || strings.Contains(v.Elicitation.Message, "read:") {
		t.Fatalf("confirmation message = %+v", v.Elicitation)
	}
	if len(r.caller.calls) != 0 {
		t.Fatal("a step ran before the confirmation")
	}
	if _, err := svc.Runs.Answer(ctx, r.p, v.ID, "accept"); err != nil {
		t.Fatal(err)
	}
	a := r.caller.next(t)
	a.answer(map[string]any{"value": "n1", "items": []string{}, "count": 0}, nil)
	b := r.caller.next(t)
	if !a.confirmed || !b.confirmed {
		t.Fatal("the steps of a confirmed run did not carry the confirmation")
	}
	b.answer(map[string]any{"removed": true}, nil)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if end, err := svc.Runs.Wait(wctx, r.p, v.ID, 10*time.Millisecond); err != nil || end.State != runs.StateCompleted {
		t.Fatalf("run ended %+v, %v", end, err)
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if strings.Join(fr.confirmations, ",") != "confirmation_asked,confirmation_accepted" {
		t.Fatalf("confirmations = %v, want one asked and one accepted", fr.confirmations)
	}
}

func TestOnlyTheCreatorOrAnAdminReplacesOrDeletes(t *testing.T) {
	t.Parallel()
	svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(serviceDef))
	if _, _, err := svc.Create(ctx, r.p, def, "", false); err != nil {
		t.Fatal(err)
	}
	bob := r.p
	bob.UserID = "usr_bob"
	if _, _, err := svc.Create(ctx, bob, def, "", true); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Fatalf("bob overwrites = %v", err)
	}
	if err := svc.Delete(ctx, bob, "notes"); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Fatalf("bob deletes = %v", err)
	}
	admin := bob
	admin.Role = switchboard.RoleAdmin
	if err := svc.Delete(ctx, admin, "notes"); err != nil {
		t.Fatalf("admin deletes = %v", err)
	}
}

// ServiceForTest is a Service on a runs executor and a fake router (for the MCP
// tools' tests): answer answers the tool calls its steps make, in order.
func ServiceForTest(t *testing.T) (svc *Service, p switchboard.Principal, answer func(out any)) {
	svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	return svc, r.p, func(out any) { r.caller.next(t).answer(out, nil) }
}

// TestRunnable: a saved workflow is runnable by a principal whose tools its steps
// use; an unknown one (or another tenant's) is not found, and one whose tools the
// principal may not use is invalid, naming the step.
func TestRunnable(t *testing.T) {
	t.Parallel()
	svc, fr, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(serviceDef))
	if _, _, err := svc.Create(ctx, r.p, def, "", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.Runnable(ctx, r.p, "notes"); err != nil {
		t.Errorf("Runnable(notes) = %v", err)
	}
	if err := svc.Runnable(ctx, r.p, "nope"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("Runnable(nope) = %v; want not found", err)
	}
	other := r.p
	other.TenantID = "ten_b"
	if err := svc.Runnable(ctx, other, "notes"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("another tenant's Runnable(notes) = %v; want not found", err)
	}
	fr.staticCatalog.tenant = "ten_c" // the principal's tools are gone
	if e := switchboard.AsError(svc.Runnable(ctx, r.p, "notes")); e.Code != switchboard.CodeInvalid || !strings.HasPrefix(e.Field, "steps.read") {
		t.Errorf("Runnable(notes) without its tools = %v; want invalid naming step read", e)
	}
}

// TestAgentKeysManageNoWorkflows: an agent's key never saves, replaces, deletes or
// sets the webhook secret of a workflow, even its creator's and even when the creator
// is the tenant's owner; each refusal is forbidden and changes nothing.
func TestAgentKeysManageNoWorkflows(t *testing.T) {
	t.Parallel()
	svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	owner := r.p
	owner.Role = switchboard.RoleOwner
	hooked := strings.Replace(scheduledDef, "  - schedule: \"*/5 * * * *\"\n    params: {key: scheduled}\n", "  - github: {events: [push]}\n", 1)
	def, err := Parse([]byte(hooked))
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := svc.Create(ctx, owner, def, hooked, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SetWebhookSecret(ctx, owner, w.Name, "github", "owner-secret-0123456789"); err != nil {
		t.Fatal(err)
	}
	agent := switchboard.Principal{TenantID: owner.TenantID, Kind: switchboard.PrincipalAgent, UserID: owner.UserID, AgentID: "agt_1", Role: switchboard.RoleOwner, KeyID: "key_agent"}
	other, _ := Parse([]byte(strings.Replace(serviceDef, "name: notes", "name: other", 1)))
	tries := []struct {
		name string
		do   func() error
	}{
		{"create", func() error { _, _, err := svc.Create(ctx, agent, other, "", false); return err }},
		{"replace", func() error { _, _, err := svc.Create(ctx, agent, def, hooked, true); return err }},
		{"delete", func() error { return svc.Delete(ctx, agent, w.Name) }},
		{"webhook secret", func() error { return svc.SetWebhookSecret(ctx, agent, w.Name, "github", "agent-secret-0123456789") }},
	}
	for _, tc := range tries {
		err := tc.do()
		if e := switchboard.AsError(err); e.Code != switchboard.CodeForbidden || !strings.Contains(e.Message, "an agent's API key cannot") {
			t.Errorf("%s as the owner's agent: %v; want forbidden, saying an agent's key cannot", tc.name, err)
		}
	}
	got, err := svc.Get(ctx, owner, w.Name)
	if err != nil || got.Version != w.Version {
		t.Fatalf("the workflow after the agent's tries: %+v, %v; want version %d", got, err, w.Version)
	}
	if _, err := svc.Get(ctx, owner, "other"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("the agent's workflow other: %v; want not found", err)
	}
	secret, err := svc.Store.secret(ctx, &got, "github")
	if err != nil || string(secret) != "owner-secret-0123456789" {
		t.Errorf("the webhook secret after the agent's tries: %q, %v; want the owner's", secret, err)
	}
}

// TestWorkflowRunsHaveTheirOwnTimeLimit: a workflow run's time limit is the run's
// timeout, else its definition's, else DefaultTimeout, never the executor's limit of
// other runs (a minute in the rig): its steps' calls carry that deadline.
func TestWorkflowRunsHaveTheirOwnTimeLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		def     string
		timeout time.Duration
		want    time.Duration
	}{
		{name: "the call's", def: "timeout: 20m\n", timeout: 900 * time.Second, want: 900 * time.Second},
		{name: "the definition's", def: "timeout: 20m\n", want: 20 * time.Minute},
		{name: "the default", want: DefaultTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
			ctx := context.Background()
			src := "name: slow\n" + tt.def + "steps:\n  - {name: read, tool: flow_read, args: {key: k}}\n"
			def, err := Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := svc.Create(ctx, r.p, def, src, false); err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			v, err := svc.Start(ctx, r.p, "slow", nil, StartOptions{Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			c := r.caller.next(t)
			after := time.Now()
			deadline, ok := c.ctx.Deadline()
			if !ok || deadline.Before(before.Add(tt.want)) || deadline.After(after.Add(tt.want)) {
				t.Errorf("the step's deadline is %s after the start (set %t); want the run's limit %s", deadline.Sub(before), ok, tt.want)
			}
			c.answer(map[string]any{"value": "v", "items": []string{}, "count": 0}, nil)
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			if end, err := svc.Runs.Wait(wctx, r.p, v.ID, 10*time.Millisecond); err != nil || end.State != runs.StateCompleted {
				t.Fatalf("run ended %+v, %v", end, err)
			}
		})
	}
}
