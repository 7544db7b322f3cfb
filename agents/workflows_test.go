package agents_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// fakeWorkflows answers Runnable as a workflows service would: the tenant's saved
// workflows, each runnable only by the users listed for it; it records who asked.
type fakeWorkflows struct {
	saved map[string][]string // workflow name → users who may run it

	mu    sync.Mutex
	asked []string // "user/name"
}

// spec is the workflows provider over the fake's saved workflows, each a tool of the
// tenant's (run_flow__<name> and the rest of its tools), as serve registers workflows.Service.Spec.
func (f *fakeWorkflows) spec() providers.Spec {
	return providers.Spec{Name: workflows.Provider, Title: "Workflows", Connectionless: true, ConfirmsItself: true,
		TenantTools: func(context.Context, switchboard.TenantID) ([]*providers.Tool, error) {
			var out []*providers.Tool
			for name := range f.saved {
				t, err := (&workflows.Service{}).Tool(workflows.Workflow{Name: name})
				if err != nil {
					return nil, err
				}
				out = append(out, t)
			}
			return out, nil
		}}
}

func (f *fakeWorkflows) Runnable(_ context.Context, p switchboard.Principal, name string) error {
	f.mu.Lock()
	f.asked = append(f.asked, p.UserID+"/"+name)
	f.mu.Unlock()
	users, ok := f.saved[name]
	if !ok {
		return switchboard.NotFound("workflow")
	}
	if p.Kind != switchboard.PrincipalUser || !slices.Contains(users, p.UserID) {
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: "steps.one.tool", Message: "the workflow definition has 1 problem: step one: tool flow_read is not a tool you may use"}
	}
	return nil
}

// TestAgentsSelectWorkflows: an agent's tools may include run_flow__<name> with no
// connection, checked at save against the agent's creator; an unknown workflow, one
// the creator may not run, or a connection on a workflow tool is refused naming
// tools[i], and nothing changes.
func TestAgentsSelectWorkflows(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		flows := &fakeWorkflows{}
		r := newRig(t, db, flows.spec())
		flows.saved = map[string][]string{"triage": {r.a.UserID, r.member.UserID}, "owners_only": {r.a.UserID}}
		// Without a workflows service, a workflow tool is refused.
		_, err := r.svc.Create(ctx, r.a, agents.Input{Name: "Early", Tools: []agents.ToolInput{{Tool: "run_flow__triage"}}})
		if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "tools[0].tool" {
			t.Fatalf("a workflow tool without workflows: %v", err)
		}
		r.svc.SetWorkflows(flows)

		a, err := r.svc.Create(ctx, r.member, agents.Input{Name: "Triage", Tools: []agents.ToolInput{
			{Tool: "github_get_issue", ConnectionID: r.connA}, {Tool: "run_flow__triage"}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.svc.Get(ctx, r.member, a.ID)
		if err != nil || len(got.Tools) != 2 || got.Tools[1].Tool != "run_flow__triage" || got.Tools[1].ConnectionID != "" {
			t.Fatalf("saved agent tools = %+v, %v; want github_get_issue and run_flow__triage without a connection", got.Tools, err)
		}
		if _, err := r.svc.ForNewKey(ctx, r.member, a.ID); err != nil {
			t.Errorf("a key for the agent with a workflow tool: %v", err)
		}

		refused := []struct {
			name  string
			p     switchboard.Principal
			tools []agents.ToolInput
			field string
		}{
			// No saved workflow has that name, so it is taken for a tool of a connection.
			{name: "unknown workflow", p: r.member, tools: []agents.ToolInput{{Tool: "github_get_issue", ConnectionID: r.connA}, {Tool: "run_flow__nope"}}, field: "tools[1].connection_id"},
			{name: "workflow the creator may not run", p: r.member, tools: []agents.ToolInput{{Tool: "run_flow__owners_only"}}, field: "tools[0].tool"},
			// The admin may run owners_only, but the agent acts for its creator, the member.
			{name: "admin adds what the creator may not run", p: r.a, tools: []agents.ToolInput{{Tool: "run_flow__owners_only"}}, field: "tools[0].tool"},
			{name: "workflow with a connection", p: r.member, tools: []agents.ToolInput{{Tool: "run_flow__triage", ConnectionID: r.connA}}, field: "tools[0].connection_id"},
			{name: "workflow twice", p: r.member, tools: []agents.ToolInput{{Tool: "run_flow__triage"}, {Tool: "run_flow__triage"}}, field: "tools[1].tool"},
		}
		for _, tt := range refused {
			_, err := r.svc.Update(ctx, tt.p, a.ID, a.Version, agents.Input{Name: "Triage", Tools: tt.tools})
			if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != tt.field {
				t.Errorf("%s: %v; want invalid %s", tt.name, err, tt.field)
			}
		}
		after, err := r.svc.Get(ctx, r.member, a.ID)
		if err != nil || after.Version != a.Version || len(after.Tools) != 2 {
			t.Errorf("after the refused updates: %+v, %v; want version %d unchanged", after, err, a.Version)
		}
		flows.mu.Lock()
		defer flows.mu.Unlock()
		for _, asked := range flows.asked {
			if asked != r.member.UserID+"/triage" && asked != r.member.UserID+"/owners_only" && asked != r.member.UserID+"/nope" {
				t.Errorf("Runnable asked as %s; every check is the agent's creator's (%s)", asked, r.member.UserID)
			}
		}
	})
}
