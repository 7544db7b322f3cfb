package workflows_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// field is one field the orchestrator tool specification lists, with its JSON type.
type field struct{ name, typ string }

// hasType reports whether a schema's type (a string or a list) admits typ.
func hasType(schema map[string]any, typ string) bool {
	if typ == "" {
		return true // any type
	}
	switch v := schema["type"].(type) {
	case string:
		return v == typ || typ == "number" && v == "integer"
	case []any:
		for _, e := range v {
			if e == typ || typ == "number" && e == "integer" {
				return true
			}
		}
	}
	return false
}

// properties reads a schema's properties.
func properties(t *testing.T, raw json.RawMessage) map[string]map[string]any {
	t.Helper()
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties
}

// valueType is a decoded JSON value's type as a schema names it.
func valueType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "?"
}

// typed reports whether a value is of the type (an integer is a number too).
func typed(v any, typ string) bool {
	if typ == "" {
		return true // any type
	}
	got := valueType(v)
	return got == typ || typ == "number" && got == "integer"
}

// seedTool is one tool of the orchestrator specification: its parameters and answer
// fields, each [name, JSON type] ("" for any type).
type seedTool struct {
	In         [][2]string `json:"in"`
	Out        [][2]string `json:"out"`
	WhenFailed []string    `json:"when_failed"`
}

// answered is the tool's answer fields a run that did not fail carries too.
func (st seedTool) answered(failed bool) []field {
	var out []field
	for _, f := range fieldsOf(st.Out) {
		if failed || !slices.Contains(st.WhenFailed, f.name) {
			out = append(out, f)
		}
	}
	return out
}

// seedFields is testdata/seed004_fields.json: the fields the orchestrator
// specification lists (the MCP adapter's test checks the same table over the wire).
type seedFields struct {
	Tools      map[string]seedTool `json:"tools"`
	StepResult [][2]string         `json:"step_result"`
}

func loadSeedFields(t *testing.T) seedFields {
	t.Helper()
	raw, err := os.ReadFile("testdata/seed004_fields.json")
	if err != nil {
		t.Fatal(err)
	}
	var sf seedFields
	if err := json.Unmarshal(raw, &sf); err != nil || len(sf.Tools) != 4 {
		t.Fatalf("testdata/seed004_fields.json: %v (%d tools)", err, len(sf.Tools))
	}
	return sf
}

func fieldsOf(pairs [][2]string) []field {
	out := make([]field, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, field{p[0], p[1]})
	}
	return out
}

// TestSeedToolsConformance: run_workflow, list_workflows, create_workflow and
// cancel_workflow take every parameter the orchestrator specification lists and answer
// every field it lists, each with its type, in their schemas and in their answers:
// times in seconds, workflow_path, a reason recorded on the canceled run, a finished
// run's cancel answered as information, and parallel_limit or timeout out of range
// refused naming the field.
func TestSeedToolsConformance(t *testing.T) {
	t.Parallel()
	svc, p, answer := workflows.ServiceForTest(t)
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	table := loadSeedFields(t)
	spec := map[string]struct{ in, out []field }{}
	for name, st := range table.Tools {
		spec[name] = struct{ in, out []field }{fieldsOf(st.In), fieldsOf(st.Out)}
	}
	for name, s := range spec {
		tool, ok := reg.Tool(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		in, out := properties(t, tool.InputSchema), properties(t, tool.OutputSchema)
		for _, f := range s.in {
			if p, ok := in[f.name]; !ok || !hasType(p, f.typ) {
				t.Errorf("%s input %s = %v; want type %s", name, f.name, p, f.typ)
			}
		}
		for _, f := range s.out {
			if p, ok := out[f.name]; !ok || !hasType(p, f.typ) {
				t.Errorf("%s output %s = %v; want type %s", name, f.name, p, f.typ)
			}
		}
	}
	if _, ok := properties(t, mustTool(t, reg, "create_workflow").InputSchema)["definition"]; !ok {
		t.Error("create_workflow takes no definition")
	}
	stepFields := fieldsOf(table.StepResult)
	var rs struct {
		Properties struct {
			StepResults struct {
				Items struct {
					Properties map[string]map[string]any `json:"properties"`
				} `json:"items"`
			} `json:"step_results"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(mustTool(t, reg, "run_workflow").OutputSchema, &rs); err != nil {
		t.Fatal(err)
	}
	for _, f := range stepFields {
		if p, ok := rs.Properties.StepResults.Items.Properties[f.name]; !ok || !hasType(p, f.typ) {
			t.Errorf("step result %s = %v; want type %s", f.name, p, f.typ)
		}
	}
	if _, ok := rs.Properties.StepResults.Items.Properties["output"]; !ok {
		t.Error("step results have no output")
	}

	// The answers carry the fields with their types.
	src := "name: ci_pipeline\ncategory: build\nparameters: {type: object, properties: {branch: {type: string}}, required: [branch]}\n" +
		"steps:\n  - {name: checkout, tool: flow_read, args: {key: \"${{ params.branch }}\"}}\noutputs: {commit: \"${{ steps.checkout.output.value }}\"}\n"
	created := callTool(t, ctx, reg, p, "create_workflow", map[string]any{"name": "ci_pipeline", "definition": src})
	checkFields(t, "create_workflow", created, spec["create_workflow"].out)
	if created["workflow_path"] != "/api/workflows/ci_pipeline" || created["status"] != "created" {
		t.Errorf("create = %v", created)
	}
	for _, bad := range []struct {
		args  map[string]any
		field string
	}{
		{map[string]any{"workflow_name": "ci_pipeline", "parameters": map[string]any{"branch": "main"}, "parallel_limit": 0}, "parallel_limit"},
		{map[string]any{"workflow_name": "ci_pipeline", "parameters": map[string]any{"branch": "main"}, "parallel_limit": 33}, "parallel_limit"},
		{map[string]any{"workflow_name": "ci_pipeline", "parameters": map[string]any{"branch": "main"}, "timeout": 0}, "timeout"},
	} {
		got := callTool(t, ctx, reg, p, "run_workflow", bad.args)
		if msg, _ := got["error_text"].(string); !strings.Contains(msg, `"`+bad.field+`"`) {
			t.Errorf("run_workflow %v = %v; want %s refused by name", bad.args, got, bad.field)
		}
	}
	done := make(chan map[string]any, 1)
	go func() {
		done <- callTool(t, ctx, reg, p, "run_workflow", map[string]any{"workflow_name": "ci_pipeline", "parameters": map[string]any{"branch": "main"}, "timeout": 1800, "parallel_limit": 4})
	}()
	answer(map[string]any{"value": "abc123", "items": []string{}, "count": 0})
	ran := testwait.Recv(t, done, "run_workflow to answer")
	checkFields(t, "run_workflow", ran, table.Tools["run_workflow"].answered(false))
	if ran["status"] != "success" {
		t.Fatalf("run = %v", ran)
	}
	steps, _ := ran["step_results"].([]any)
	if len(steps) != 1 {
		t.Fatalf("step_results = %v", ran["step_results"])
	}
	checkFields(t, "step result", steps[0].(map[string]any), stepFields)
	if _, ok := steps[0].(map[string]any)["output"].(map[string]any); !ok {
		t.Errorf("step result output = %v; want the step's output object", steps[0])
	}
	if d := steps[0].(map[string]any)["duration"].(float64); d > 60 {
		t.Errorf("duration = %v; want seconds", d)
	}
	listed := callTool(t, ctx, reg, p, "list_workflows", map[string]any{"category": "build", "include_running": true})
	checkFields(t, "list_workflows", listed, spec["list_workflows"].out)
	if ws, _ := listed["workflows"].([]any); len(ws) != 1 {
		t.Errorf("list = %v", listed)
	}
	if empty := callTool(t, ctx, reg, p, "list_workflows", map[string]any{"category": "deploy"}); fmtJSON(empty["workflows"]) != "[]" {
		t.Errorf("list of an empty category = %v; want an empty list", empty)
	}

	// A run held at its step is cancelled with a reason, which its run records; a
	// second cancel answers that it had finished.
	v, err := svc.Start(ctx, p, "ci_pipeline", json.RawMessage(`{"branch":"dev"}`), workflows.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	canceled := callTool(t, ctx, reg, p, "cancel_workflow", map[string]any{"workflow_id": v.ID, "reason": "User requested"})
	checkFields(t, "cancel_workflow", canceled, spec["cancel_workflow"].out)
	if canceled["status"] != "cancelled" {
		t.Errorf("cancel = %v", canceled)
	}
	if got, err := svc.Runs.Get(ctx, p, v.ID); err != nil || got.Error == nil || !strings.Contains(got.Error.Message, "User requested") {
		t.Errorf("the canceled run = %+v, %v; want its reason recorded", got, err)
	}
	again := callTool(t, ctx, reg, p, "cancel_workflow", map[string]any{"workflow_id": v.ID})
	if again["error_text"] != nil || again["status"] != "error" || !strings.Contains(fmtJSON(again["message"]), "already finished") {
		t.Errorf("cancel of a finished run = %v; want information that it had finished", again)
	}
	if missing := callTool(t, ctx, reg, p, "cancel_workflow", map[string]any{"workflow_id": "run_nope"}); missing["error_text"] == nil {
		t.Errorf("cancel of an unknown run = %v; want an error", missing)
	}
}

func mustTool(t *testing.T, reg *providers.Registry, name string) *providers.Tool {
	t.Helper()
	tool, ok := reg.Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool
}

// checkFields checks that an answer holds each field with its type.
func checkFields(t *testing.T, what string, got map[string]any, fields []field) {
	t.Helper()
	for _, f := range fields {
		v, ok := got[f.name]
		if !ok || !typed(v, f.typ) {
			t.Errorf("%s answered %s = %v (%s); want a %s in %v", what, f.name, v, valueType(v), f.typ, got)
		}
	}
}

// TestFlowManagementTools: list_flows lists the caller's own flow instances as their
// statuses; cancel_flow cancels one the caller started, recording the reason, answers
// a finished one's status, and another person's instance is not found to them.
func TestFlowManagementTools(t *testing.T) {
	t.Parallel()
	svc, p, _ := workflows.ServiceForTest(t)
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	src := "name: echo\nparameters: {type: object, properties: {k: {type: string}}, required: [k]}\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ params.k }}\"}}\n"
	if got := callTool(t, ctx, reg, p, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" {
		t.Fatalf("create = %v", got)
	}
	v, err := svc.Start(ctx, p, "echo", json.RawMessage(`{"k":"a"}`), workflows.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listed := callTool(t, ctx, reg, p, "list_flows", map[string]any{"name": "echo"})
	flows, _ := listed["flows"].([]any)
	if len(flows) != 1 || flows[0].(map[string]any)["instance_id"] != v.ID || flows[0].(map[string]any)["state"] != "working" || flows[0].(map[string]any)["name"] != "echo" {
		t.Fatalf("list_flows = %v", listed)
	}
	other := p
	other.UserID = "usr_other"
	octx := switchboard.WithPrincipal(context.Background(), other)
	if got := callTool(t, octx, reg, other, "list_flows", map[string]any{}); fmtJSON(got["flows"]) != "[]" {
		t.Errorf("another person's list_flows = %v; want none", got)
	}
	if got := callTool(t, octx, reg, other, "cancel_flow", map[string]any{"instance_id": v.ID}); got["error_text"] == nil {
		t.Errorf("another person's cancel_flow = %v; want refused", got)
	}
	canceled := callTool(t, ctx, reg, p, "cancel_flow", map[string]any{"instance_id": v.ID, "reason": "no longer needed"})
	if canceled["state"] != "failed" || canceled["instance_id"] != v.ID {
		t.Errorf("cancel_flow = %v", canceled)
	}
	if got, err := svc.Runs.Get(ctx, p, v.ID); err != nil || got.State != "canceled" || !strings.Contains(got.Error.Message, "no longer needed") {
		t.Errorf("the canceled instance = %+v, %v", got, err)
	}
	if again := callTool(t, ctx, reg, p, "cancel_flow", map[string]any{"instance_id": v.ID}); again["error_text"] != nil || again["state"] != "failed" {
		t.Errorf("cancel_flow of a finished instance = %v; want its status", again)
	}
}
