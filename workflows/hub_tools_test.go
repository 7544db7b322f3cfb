package workflows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/workflows"
)

// hubRegistry registers the workflows provider and the hub's tools over svc, as serve
// does.
func hubRegistry(t *testing.T, svc *workflows.Service) *providers.Registry {
	t.Helper()
	reg := providers.NewRegistry()
	if err := reg.Register(svc.Spec()); err != nil {
		t.Fatal(err)
	}
	if err := (&hub.Tools{Runs: svc.Runs, Workflows: svc, Registry: reg}).Register(reg); err != nil {
		t.Fatal(err)
	}
	return reg
}

// callTool calls a registered or tenant tool's operation as p and answers its
// structured output (or {"error_text": …} when it failed).
func callTool(t *testing.T, ctx context.Context, reg *providers.Registry, p switchboard.Principal, name string, args any) map[string]any {
	t.Helper()
	tool, ok := reg.Tool(name)
	if !ok {
		var err error
		if tool, err = reg.TenantTool(ctx, p.TenantID, name); err != nil {
			t.Fatalf("no tool %s: %v", name, err)
		}
	}
	raw, _ := json.Marshal(args)
	out, err := tool.Op.Invoke(ctx, &providers.Call{Tenant: p.TenantID, Principal: p}, raw)
	if err != nil {
		return map[string]any{"error_text": hub.ErrorText(err)}
	}
	if cr, ok := out.(*providers.ContentResult); ok {
		raw = cr.StructuredContent
	} else if raw, err = json.Marshal(out); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s answered %s: %v", name, raw, err)
	}
	return m
}

// toolNames are the names of the tenant's tools of the workflows provider.
func toolNames(t *testing.T, ctx context.Context, reg *providers.Registry, p switchboard.Principal) string {
	t.Helper()
	tools, err := reg.TenantTools(ctx, p.TenantID)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, tool := range tools {
		n = append(n, tool.Name)
	}
	return strings.Join(n, ",")
}

// TestHubToolsCreateListAndRunAWorkflow: create_workflow names each problem of a bad
// definition by step and field, saves a good one, which becomes the tenant's tool
// trio run_flow__echo, run_flow_async__echo and query_flow__echo (and the same for its
// version 1); list_workflows lists it; run_workflow runs it and answers its outputs.
func TestHubToolsCreateListAndRunAWorkflow(t *testing.T) {
	t.Parallel()
	svc, p, answer := workflows.ServiceForTest(t)
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	bad := callTool(t, ctx, reg, p, "create_workflow", map[string]any{"definition": "name: echo\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ parms.k }}\"}}\n"})
	if bad["status"] != "error" || !strings.Contains(fmtJSON(bad["problems"]), `"field":"args.key","message":"${{ parms.k }}: column 1: undeclared reference to 'parms'`) || !strings.Contains(fmtJSON(bad["problems"]), `"step":"one"`) {
		t.Fatalf("bad create = %v", bad)
	}
	if names := toolNames(t, ctx, reg, p); names != "" {
		t.Fatalf("a refused definition left tools %s", names)
	}
	src := "name: echo\nparameters: {type: object, properties: {k: {type: string}}, required: [k]}\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ params.k }}\"}}\noutputs: {value: \"${{ steps.one.output.value }}\"}\n"
	if got := callTool(t, ctx, reg, p, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" || got["tool"] != "run_flow__echo" || got["workflow_path"] != "/api/workflows/echo" {
		t.Fatalf("create = %v", got)
	}
	if names := toolNames(t, ctx, reg, p); names != "run_flow__echo,run_flow_async__echo,query_flow__echo,run_flow__echo_1,run_flow_async__echo_1,query_flow__echo_1" {
		t.Fatalf("tools after create: %s", names)
	}
	if got := callTool(t, ctx, reg, p, "list_workflows", map[string]any{"include_running": true}); fmtJSON(got["workflows"]) == "[]" || got["running_count"] != float64(0) {
		t.Fatalf("list = %v", got)
	}
	done := make(chan map[string]any, 1)
	go func() {
		done <- callTool(t, ctx, reg, p, "run_workflow", map[string]any{"workflow_name": "echo", "parameters": map[string]any{"k": "hello"}})
	}()
	answer(map[string]any{"value": "HELLO", "items": []string{}, "count": 0})
	got := testwait.Recv(t, done, "run_workflow to answer")
	if got["status"] != "success" || fmtJSON(got["outputs"]) != `{"value":"HELLO"}` || got["steps_completed"] != float64(1) || got["workflow_id"] == "" {
		t.Fatalf("run = %v", got)
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRunWorkflowRunLastsAsLongAsItsWorkflow: a run of run_workflow, which waits for its
// workflow's run, has that workflow's time limit (its definition's, or the timeout the
// call gives), and a little more, rather than the executor's; a dry run, which runs
// nothing, and any other tool keep the executor's (0).
func TestRunWorkflowRunLastsAsLongAsItsWorkflow(t *testing.T) {
	t.Parallel()
	svc, p, _ := workflows.ServiceForTest(t)
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	src := "name: slow\ntimeout: 2h\nsteps:\n  - {name: one, tool: flow_read, args: {key: k}}\n"
	if got := callTool(t, ctx, reg, p, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" {
		t.Fatalf("create = %v", got)
	}
	h := &workflows.Hub{Registry: reg, Service: svc}
	limit := func(tool string, args map[string]any) time.Duration {
		raw, _ := json.Marshal(args)
		return h.Limit(ctx, p, router.Request{Tool: tool, Args: raw})
	}
	if got := limit("run_workflow", map[string]any{"workflow_name": "slow"}); got < 2*time.Hour || got > 2*time.Hour+5*time.Minute {
		t.Errorf("limit of run_workflow of a 2h workflow = %s, want 2h and a little more", got)
	}
	if got := limit("run_workflow", map[string]any{"workflow_name": "slow", "timeout": 60}); got < time.Minute || got > 10*time.Minute {
		t.Errorf("limit of run_workflow with timeout 60 = %s, want 1m and a little more", got)
	}
	for _, args := range []map[string]any{{"workflow_name": "slow", "dry_run": true}, {"workflow_name": "missing"}} {
		if got := limit("run_workflow", args); got != 0 {
			t.Errorf("limit of run_workflow %v = %s, want the executor's (0)", args, got)
		}
	}
	if got := limit("list_workflows", map[string]any{}); got != 0 {
		t.Errorf("limit of list_workflows = %s, want the executor's (0)", got)
	}
}
