package workflows

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// TestWorkflowsAreToolsOfTheirProvider: a tenant's saved workflow is the tool
// run_flow__<name> of the connectionless workflows provider, with the workflow's
// parameters (and _context) as its input schema, listed for its tenant only; invoking
// it runs the workflow as the call's principal and answers its status and output,
// isError when it failed.
func TestWorkflowsAreToolsOfTheirProvider(t *testing.T) {
	t.Parallel()
	svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(serviceDef))
	if _, _, err := svc.Create(ctx, r.p, def, serviceDef, false); err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	if err := reg.Register(svc.Spec()); err != nil {
		t.Fatal(err)
	}
	if tools, err := reg.TenantTools(ctx, "ten_x"); err != nil || len(tools) != 0 {
		t.Fatalf("another tenant's tools = %v, %v; want none", tools, err)
	}
	tool, err := reg.TenantTool(ctx, r.p.TenantID, "run_flow__notes")
	if err != nil || tool == nil {
		t.Fatalf("run_flow__notes = %v, %v", tool, err)
	}
	if !IsTool(tool) || !tool.Provider.Connectionless || !tool.Provider.ConfirmsItself {
		t.Fatalf("workflow_notes provider = %+v", tool.Provider)
	}
	if err := tool.Validate(json.RawMessage(`{}`)); switchboard.AsError(err).Field != "key" {
		t.Errorf("validate without key = %v; want the parameters' schema to name key", err)
	}

	invoke := func(answer func()) *providers.ContentResult {
		done := make(chan any, 1)
		go func() {
			out, err := tool.Op.Invoke(ctx, &providers.Call{Tenant: r.p.TenantID, Principal: r.p}, json.RawMessage(`{"key":"k"}`))
			if err != nil {
				done <- err
				return
			}
			done <- out
		}()
		answer()
		switch v := (<-done).(type) {
		case *providers.ContentResult:
			return v
		default:
			t.Fatalf("invoke = %v", v)
			return nil
		}
	}
	res := invoke(func() {
		r.caller.next(t).answer(map[string]any{"value": "n1", "items": []string{}, "count": 0}, nil)
		r.caller.next(t).answer(map[string]any{"removed": true}, nil)
	})
	var ans struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Output map[string]any `json:"output"`
	}
	if err := json.Unmarshal(res.StructuredContent, &ans); err != nil || res.IsError || ans.Status.State != "completed" || ans.Output["removed"] != true {
		t.Errorf("result = %s (isError %t), %v; want success with removed", res.StructuredContent, res.IsError, err)
	}
	res = invoke(func() {
		r.caller.next(t).answer(nil, switchboard.Invalid("key", "no such note"))
	})
	if err := json.Unmarshal(res.StructuredContent, &ans); err != nil || !res.IsError || ans.Status.State != "failed" {
		t.Errorf("result = %s (isError %t), %v; want failed, isError", res.StructuredContent, res.IsError, err)
	}
}
