package router

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// calledOp is a connectionless tool's operation that answers with whom it ran for.
type calledOp struct{ info providers.Info }

func (o *calledOp) Info() providers.Info { return o.info }
func (o *calledOp) InputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("declared, not reflected")
}
func (o *calledOp) OutputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("declared, not reflected")
}
func (o *calledOp) Invoke(_ context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	return map[string]string{"tenant": string(c.Tenant), "principal": c.Principal.ID(), "connection": c.ConnectionID, "args": string(args)}, nil
}

// fixedPolicy is every principal's confirm policy.
type fixedPolicy string

func (f fixedPolicy) Policy(context.Context, switchboard.Principal) (Policy, error) {
	return Policy{Confirm: string(f), Approval: ApprovalRelay}, nil
}

// withTenantTools registers a connectionless provider whose tenant ten_a has one
// tool, workflow_daily, that changes data.
func withTenantTools(t *testing.T, f *fixture, confirmsItself bool) {
	t.Helper()
	spec := &providers.Spec{Name: "flows", Title: "Flows", Connectionless: true, ConfirmsItself: confirmsItself}
	spec.TenantTools = func(_ context.Context, tenant switchboard.TenantID) ([]*providers.Tool, error) {
		if tenant != "ten_a" {
			return nil, nil
		}
		tool, err := providers.NewConnectionTool(spec, "workflow_daily", &calledOp{info: providers.Info{Name: "daily", Title: "Daily", Description: "Daily.",
			Hints: providers.Hints{Destructive: true}}}, json.RawMessage(`{"type":"object","properties":{"day":{"type":"string"}},"required":["day"]}`), nil)
		return []*providers.Tool{tool}, err
	}
	if err := f.router.registry.Register(*spec); err != nil {
		t.Fatal(err)
	}
}

// TestConnectionlessTools: a tool that runs on no connection (a tenant's saved
// workflow) is listed for its tenant's people and the agents that selected it, runs
// as the principal with no connection and no upstream request, leaves its audit row,
// and is refused to another tenant, to an agent that did not select it, with a
// connection named, or with invalid arguments.
func TestConnectionlessTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	withTenantTools(t, f, false)
	f.router.agents = memSelection{"agt_scribe": {{Tool: "workflow_daily"}}, "agt_other": {{Tool: "fake_greet", ConnectionID: "con_a1"}}}
	ctx := context.Background()
	listed := func(p switchboard.Principal) bool {
		bs, err := f.router.Tools(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.Tool.Name == "workflow_daily" {
				if len(b.Connections) != 0 {
					t.Errorf("workflow_daily listed with connections %v", b.Connections)
				}
				return true
			}
		}
		return false
	}
	other := scribe
	other.AgentID = "agt_other"
	for _, tc := range []struct {
		name string
		p    switchboard.Principal
		want bool
	}{{"a person of the tenant", carol, true}, {"its agent", scribe, true}, {"an agent without it", other, false}, {"another tenant", bob, false}} {
		if got := listed(tc.p); got != tc.want {
			t.Errorf("%s: listed = %t, want %t", tc.name, got, tc.want)
		}
	}

	args := json.RawMessage(`{"day":"monday"}`)
	for _, p := range []switchboard.Principal{carol, scribe} {
		out, err := f.router.Execute(ctx, p, Request{Tool: "workflow_daily", Args: args})
		if err != nil {
			t.Fatalf("%s: %v", p.ID(), err)
		}
		want := map[string]string{"tenant": "ten_a", "principal": p.ID(), "connection": "", "args": string(args)}
		if got := out.(map[string]string); got["principal"] != want["principal"] || got["tenant"] != want["tenant"] || got["connection"] != "" || got["args"] != want["args"] {
			t.Errorf("%s: ran with %v, want %v", p.ID(), got, want)
		}
		if ev := f.audit.last(t); ev.Tool != "workflow_daily" || ev.Outcome != "ok" || ev.Principal != p.ID() || ev.ConnectionID != "" {
			t.Errorf("%s: audit event %+v", p.ID(), ev)
		}
	}
	refused := []struct {
		name string
		p    switchboard.Principal
		req  Request
		code switchboard.Code
	}{
		{"another tenant", bob, Request{Tool: "workflow_daily", Args: args}, switchboard.CodeNotFound},
		{"an agent without it", other, Request{Tool: "workflow_daily", Args: args}, switchboard.CodeNotFound},
		{"a connection named", carol, Request{Tool: "workflow_daily", ConnectionID: "con_a1", Args: args}, switchboard.CodeInvalid},
		{"invalid arguments", carol, Request{Tool: "workflow_daily", Args: json.RawMessage(`{}`)}, switchboard.CodeInvalid},
	}
	for _, tc := range refused {
		_, err := f.router.Execute(ctx, tc.p, tc.req)
		if got := switchboard.CodeOf(err); got != tc.code {
			t.Errorf("%s: %v; want %s", tc.name, err, tc.code)
		}
		if ev := f.audit.last(t); ev.Outcome != string(tc.code) || ev.Principal != tc.p.ID() {
			t.Errorf("%s: audit event %+v", tc.name, ev)
		}
	}
	select {
	case tok := <-f.tokens:
		t.Errorf("a connectionless tool reached an upstream with %q", tok)
	default:
	}
}

// TestConnectionlessToolsConfirm: the confirm policy covers a connectionless tool as
// any other, unless its provider asks the person itself (a workflow's plan).
func TestConnectionlessToolsConfirm(t *testing.T) {
	t.Parallel()
	for _, confirmsItself := range []bool{false, true} {
		f := newFixture(t)
		withTenantTools(t, f, confirmsItself)
		f.router.policies = fixedPolicy(ConfirmAlways)
		_, err := f.router.Execute(context.Background(), carol, Request{Tool: "workflow_daily", Args: json.RawMessage(`{"day":"monday"}`)})
		want := switchboard.CodeConfirmationRequired
		if confirmsItself {
			want = ""
		}
		if got := switchboard.CodeOf(err); err != nil && got != want || err == nil && want != "" {
			t.Errorf("confirms itself %t: %v; want %q", confirmsItself, err, want)
		}
	}
}
