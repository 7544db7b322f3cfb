package runs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// TestApprovalByAPerson: under approval "person" the agent cannot confirm its own run
// (the relay is refused, naming the approval page); only a signed-in person of the
// tenant who may use the run's connection approves it there, once, and each step
// leaves its audit row.
func TestApprovalByAPerson(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		agent := switchboard.Principal{TenantID: r.ann.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.ann.UserID, AgentID: "agt_bot", KeyID: "key_bot"}
		r.policy.set(agent, router.Policy{Confirm: router.ConfirmDestructive, Approval: router.ApprovalPerson})
		r.agents.set(agent.AgentID, router.Selected{Tool: "notes_delete_note", ConnectionID: r.connA})
		id := r.up.Put("needs a person")
		v, err := r.exec.Start(ctx, agent, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + id + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		page := "https://hub.test/approvals/" + v.ID
		if v.State != StateInputRequired || v.ApprovalURL != page {
			t.Fatalf("run = %+v, want input_required linking %s", v, page)
		}
		_, err = r.exec.Answer(ctx, agent, v.ID, "accept")
		if wantCode(t, err, switchboard.CodeForbidden, ""); !strings.Contains(err.Error(), page) {
			t.Errorf("the relay's refusal %q does not name the page", err)
		}
		if a, err := r.exec.Approval(ctx, r.bob, v.ID); err != nil || a.Arguments != `{"id":"`+id+`"}` || a.State != StateInputRequired {
			t.Errorf("bob's approval page = %+v, %v; want the arguments he approves", a, err)
		}
		pending, err := r.exec.Pending(ctx, r.bob)
		if err != nil || len(pending) != 1 || pending[0].RunID != v.ID || pending[0].Requester != "agent:agt_bot" || pending[0].Account != "notes-account" {
			t.Errorf("bob's pending approvals = %+v, %v", pending, err)
		}
		if others, _ := r.exec.Pending(ctx, r.bea); len(others) != 0 {
			t.Errorf("another tenant's person sees %+v", others)
		}
		refusals := []struct {
			name string
			who  switchboard.Principal
			code switchboard.Code
		}{
			{name: "the agent itself", who: agent, code: switchboard.CodeForbidden},
			{name: "another tenant's person", who: r.bea, code: switchboard.CodeNotFound},
		}
		for _, rf := range refusals {
			t.Run(rf.name, func(t *testing.T) {
				_, err := r.exec.Approve(ctx, rf.who, v.ID, "accept")
				wantCode(t, err, rf.code, "")
			})
		}
		if !r.up.Has(id) {
			t.Fatal("the note was deleted before a person approved")
		}
		got, err := r.exec.Approve(ctx, r.bob, v.ID, "accept")
		if err != nil || got.Action != "accept" {
			t.Fatalf("bob's approval = %+v, %v", got, err)
		}
		if done := r.wait(t, r.exec, agent, v.ID); done.State != StateCompleted || r.up.Has(id) {
			t.Errorf("approved run = %+v, note kept %v", done, r.up.Has(id))
		}
		_, err = r.exec.Approve(ctx, r.bob, v.ID, "decline")
		wantCode(t, err, switchboard.CodeConflict, "")
		want := []string{
			"confirmation_asked ok notes_delete_note agent:agt_bot",
			"confirmation_accepted ok notes_delete_note " + r.bob.ID(),
			"tool_call ok notes_delete_note agent:agt_bot",
		}
		if diff := cmp.Diff(want, r.audit.kinds()); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

// TestApprovalNeedsTheConnection: a person who may not use the run's connection (a
// colleague's private one) neither sees nor answers its confirmation.
func TestApprovalNeedsTheConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		private := connections.Connection{Provider: "notes", OwnerUserID: r.ann.UserID, AuthKind: providers.AuthAPIKey, AccountID: "acct-2", AccountLabel: "ann's notes"}
		if err := connections.NewStore(db, r.kr).Create(ctx, r.ann.TenantID, &private, connections.Credentials{AccessToken: notesfake.Token}); err != nil {
			t.Fatal(err)
		}
		r.policy.set(r.ann, router.Policy{Confirm: router.ConfirmAlways, Approval: router.ApprovalPerson})
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: private.ID, Args: json.RawMessage(`{"text":"mine"}`)})
		if err != nil || v.State != StateInputRequired {
			t.Fatalf("run = %+v, %v", v, err)
		}
		if pending, _ := r.exec.Pending(ctx, r.bob); len(pending) != 0 {
			t.Errorf("bob sees %+v", pending)
		}
		_, err = r.exec.Approve(ctx, r.bob, v.ID, "accept")
		wantCode(t, err, switchboard.CodeNotFound, "")
		if _, err := r.exec.Approve(ctx, r.ann, v.ID, "decline"); err != nil {
			t.Fatalf("ann declines her own run on her page: %v", err)
		}
		if got, _ := r.exec.Get(ctx, r.ann, v.ID); got.State != StateCanceled {
			t.Errorf("declined run = %+v", got)
		}
	})
}

// passGate is the router as a Gate, except that it passes every call (as workflows.Hub
// passes a workflow's run, which has no connection of its own) as a run of tool.
type passGate struct {
	*router.Router
	tool *providers.Tool
}

func (g passGate) Prepare(context.Context, switchboard.Principal, router.Request) (router.Prepared, error) {
	return router.Prepared{Tool: g.tool}, nil
}

// TestApprovalOfARunWithoutAConnection: a run on no connection of its own (a
// workflow's, whose steps name theirs) is approved by the person it belongs to, also
// when their agent started it; another person of the tenant neither sees nor answers
// it.
func TestApprovalOfARunWithoutAConnection(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		tool, _ := r.reg.Tool("notes_create_note")
		exec := r.newExecutor(t, func(o *Options) { o.Gate = passGate{Router: r.router, tool: tool} })
		ctx := context.Background()
		agent := switchboard.Principal{TenantID: r.ann.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.ann.UserID, AgentID: "agt_bot", KeyID: "key_bot"}
		v, err := exec.StartConfirm(ctx, agent, Call{Tool: "workflow_notes", Args: json.RawMessage(`{"workflow":"notes"}`)}, "Confirm: workflow notes will run 1 steps as you.")
		if err != nil || v.State != StateInputRequired || v.ApprovalURL != "https://hub.test/approvals/"+v.ID {
			t.Fatalf("run = %+v, %v; want input_required linking its page", v, err)
		}
		if pending, _ := exec.Pending(ctx, r.bob); len(pending) != 0 {
			t.Errorf("bob sees %+v", pending)
		}
		if _, err := exec.Approval(ctx, r.bob, v.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("bob's approval page: %v, want not found", err)
		}
		_, err = exec.Approve(ctx, r.bob, v.ID, "accept")
		wantCode(t, err, switchboard.CodeNotFound, "")
		pending, err := exec.Pending(ctx, r.ann)
		if err != nil || len(pending) != 1 || pending[0].RunID != v.ID || pending[0].Account != "" {
			t.Errorf("ann's pending approvals = %+v, %v; want her agent's run", pending, err)
		}
		if a, err := exec.Approval(ctx, r.ann, v.ID); err != nil || a.Arguments != `{"workflow":"notes"}` || a.Requester != "agent:agt_bot" {
			t.Errorf("ann's approval page = %+v, %v", a, err)
		}
		if _, err := exec.Approve(ctx, r.ann, v.ID, "decline"); err != nil {
			t.Fatalf("ann declines the run on her page: %v", err)
		}
		if got, _ := exec.Get(ctx, agent, v.ID); got.State != StateCanceled {
			t.Errorf("declined run = %+v", got)
		}
	})
}

// TestConfirmationTimesOut: a confirmation nobody gives in time fails its run and
// leaves a confirmation_timed_out row.
func TestConfirmationTimesOut(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		r.policy.set(r.ann, router.Policy{Confirm: router.ConfirmAlways})
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		real := r.store.now
		r.store.now = func() time.Time { return real().Add(time.Hour) }
		r.exec.tick(ctx)
		if got, _ := r.exec.Get(ctx, r.ann, v.ID); got.State != StateFailed || got.Error == nil || got.Error.Code != "timeout" {
			t.Errorf("run = %+v, want failed timeout", got)
		}
		want := []string{"confirmation_asked ok notes_get_note " + r.ann.ID(), "confirmation_timed_out ok notes_get_note " + r.ann.ID()}
		if diff := cmp.Diff(want, r.audit.kinds()); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

// TestApprovalShowsTheArgumentsWhole: arguments longer than a message's column are
// shown whole on the approval page, not cut, since the person approves every one.
func TestApprovalShowsTheArgumentsWhole(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		agent := switchboard.Principal{TenantID: r.ann.TenantID, Kind: switchboard.PrincipalAgent, UserID: r.ann.UserID, AgentID: "agt_bot", KeyID: "key_bot"}
		r.policy.set(agent, router.Policy{Confirm: router.ConfirmDestructive, Approval: router.ApprovalPerson})
		r.agents.set(agent.AgentID, router.Selected{Tool: "notes_delete_note", ConnectionID: r.connA})
		long := strings.Repeat("x", 5000)
		v, err := r.exec.Start(ctx, agent, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"` + long + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if a, err := r.exec.Approval(ctx, r.bob, v.ID); err != nil || a.Arguments != `{"id":"`+long+`"}` {
			t.Errorf("the approval page of a call with long arguments shows %d bytes of them (%v), want all %d", len(a.Arguments), err, len(long)+9)
		}
	})
}
