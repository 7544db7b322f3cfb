package workflows

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// flowDef declares its outputs' schema: the flow tools' output is typed by it.
const flowDef = `
name: notes
parameters: {type: object, properties: {key: {type: string, title: Key}}, required: [key]}
steps:
  - {name: read, tool: flow_read, args: {key: "${{ params.key }}"}}
outputs: {value: "${{ steps.read.output.value }}"}
output_schema: {type: object, properties: {value: {type: string, enum: [n1, n2]}}}
`

// flowTools returns the tenant's flow tools by name.
func flowTools(t *testing.T, svc *Service, tenant switchboard.TenantID) map[string]*providers.Tool {
	t.Helper()
	ts, err := svc.tenantTools(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*providers.Tool{}
	for _, tool := range ts {
		out[tool.Name] = tool
	}
	return out
}

func toolNamesOf(m map[string]*providers.Tool) []string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// invokeFlow calls a flow tool as p and decodes its structured answer.
func invokeFlow(t *testing.T, tool *providers.Tool, p switchboard.Principal, args string) (map[string]any, *providers.ContentResult, error) {
	t.Helper()
	out, err := tool.Op.Invoke(context.Background(), &providers.Call{Tenant: p.TenantID, Principal: p}, json.RawMessage(args))
	if err != nil {
		return nil, nil, err
	}
	cr := out.(*providers.ContentResult)
	var m map[string]any
	if err := json.Unmarshal(cr.StructuredContent, &m); err != nil {
		t.Fatalf("%s answered %s: %v", tool.Name, cr.StructuredContent, err)
	}
	return m, cr, nil
}

func jsonPath(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m
}

// TestFlowToolsTrio: a saved workflow is run_flow__, run_flow_async__ and
// query_flow__ of its name and of its version, each with _meta (model_id, version,
// model_name, kind), the workflow's parameters plus _context as input and its
// declared outputs as output; the async tool answers an instance_id at once, the query
// tool its status and output, the sync tool waits for them; the run records the
// caller's _context, and a query of another flow's instance is not found. Each kept
// version has its tools; draft runs the latest version, live the published one.
func TestFlowToolsTrio(t *testing.T) {
	t.Parallel()
	svc, _, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(flowDef))
	w, _, err := svc.Create(ctx, r.p, def, flowDef, false)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := Parse([]byte(strings.Replace(serviceDef, "name: notes", "name: other", 1)))
	if _, _, err := svc.Create(ctx, r.p, other, "", false); err != nil {
		t.Fatal(err)
	}
	tools := flowTools(t, svc, r.p.TenantID)
	want := []string{"query_flow__notes", "query_flow__notes_1", "query_flow__other", "query_flow__other_1",
		"run_flow__notes", "run_flow__notes_1", "run_flow__other", "run_flow__other_1",
		"run_flow_async__notes", "run_flow_async__notes_1", "run_flow_async__other", "run_flow_async__other_1"}
	if diff := cmp.Diff(want, toolNamesOf(tools)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	for name, kind := range map[string]string{"run_flow__notes": KindRun, "run_flow_async__notes_1": KindRunAsync, "query_flow__notes": KindQuery} {
		if diff := cmp.Diff(map[string]any{"model_id": w.ID, "version": "1", "model_name": "notes", "kind": kind}, tools[name].Meta); diff != "" {
			t.Errorf("%s _meta (-want +got):\n%s", name, diff)
		}
	}
	run := tools["run_flow__notes"]
	in := decode(t, run.InputSchema)
	if jsonPath(in, "properties", "key", "title") != "Key" || jsonPath(in, "properties", "_context", "properties", "environment_id", "enum") == nil ||
		jsonPath(in, "properties", "_context", "properties", "thread_id", "type") != "string" {
		t.Errorf("run_flow__notes input schema = %s; want key and _context", run.InputSchema)
	}
	out := decode(t, run.OutputSchema)
	if enum := jsonPath(out, "properties", "output", "properties", "value", "enum"); cmp.Diff([]any{"n1", "n2"}, enum) != "" {
		t.Errorf("run_flow__notes output schema = %s; want output typed by output_schema", run.OutputSchema)
	}
	if req := jsonPath(decode(t, tools["query_flow__notes"].OutputSchema), "properties", "status", "required"); cmp.Diff([]any{"instance_id", "name", "state", "created_at", "updated_at"}, req) != "" {
		t.Errorf("query status required = %v", req)
	}
	if req := jsonPath(decode(t, tools["run_flow_async__notes"].OutputSchema), "required"); cmp.Diff([]any{"instance_id"}, req) != "" {
		t.Errorf("async output required = %v", req)
	}
	if err := run.Validate(json.RawMessage(`{"key":"k","_context":{"environment_id":"prod"}}`)); err == nil {
		t.Error("an environment_id other than draft or live passed the schema")
	}
	if _, _, err := invokeFlow(t, run, r.p, `{"key":"k","_context":{"environment_id":"prod"}}`); switchboard.AsError(err).Field != "_context.environment_id" {
		t.Errorf("run with environment_id prod = %v; want _context.environment_id named", err)
	}

	// Async: an instance_id at once; the query answers working, then completed with
	// the output.
	started, _, err := invokeFlow(t, tools["run_flow_async__notes"], r.p, `{"key":"k","_context":{"thread_id":"th_1","environment_id":"draft","agent_version":2}}`)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := started["instance_id"].(string)
	if !strings.HasPrefix(id, "run_") || len(started) != 1 {
		t.Fatalf("async answered %v", started)
	}
	r.caller.next(t).answer(map[string]any{"value": "n1"}, nil)
	v, err := svc.Runs.Wait(ctx, r.p, id, 10*time.Millisecond)
	if err != nil || v.State != runs.StateCompleted {
		t.Fatalf("run = %+v, %v", v, err)
	}
	if string(v.Context) != `{"thread_id":"th_1","environment_id":"draft","agent_version":2}` || v.Workflow != "notes" || v.WorkflowVersion != 1 {
		t.Errorf("the run recorded context %s, workflow %s v%d", v.Context, v.Workflow, v.WorkflowVersion)
	}
	got, cr, err := invokeFlow(t, tools["query_flow__notes"], r.p, `{"instance_id":"`+id+`"}`)
	if err != nil || jsonPath(got, "status", "state") != "completed" || jsonPath(got, "status", "instance_id") != id || jsonPath(got, "status", "name") != "notes" ||
		jsonPath(got, "output", "value") != "n1" || cr.IsError {
		t.Fatalf("query = %v, %v", got, err)
	}
	for _, f := range []string{"created_at", "updated_at"} {
		if _, err := time.Parse(time.RFC3339, jsonPath(got, "status", f).(string)); err != nil {
			t.Errorf("status.%s: %v", f, err)
		}
	}
	if _, _, err := invokeFlow(t, tools["query_flow__other"], r.p, `{"instance_id":"`+id+`"}`); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("query_flow__other of a notes run = %v; want not found", err)
	}
	stranger := r.p
	stranger.UserID = "usr_2"
	if _, _, err := invokeFlow(t, tools["query_flow__notes"], stranger, `{"instance_id":"`+id+`"}`); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("another person's query = %v; want not found", err)
	}

	// Sync: waits for the end and answers the status and output.
	done := make(chan map[string]any, 1)
	go func() {
		got, _, err := invokeFlow(t, run, r.p, `{"key":"k2"}`)
		if err != nil {
			got = map[string]any{"error": err.Error()}
		}
		done <- got
	}()
	r.caller.next(t).answer(map[string]any{"value": "n2"}, nil)
	got = testwait.Recv(t, done, "run_flow__notes to answer")
	if jsonPath(got, "status", "state") != "completed" || jsonPath(got, "output", "value") != "n2" {
		t.Fatalf("run_flow__notes = %v", got)
	}

	// A new version: its own tools, and version 1's kept. draft (the default) runs the
	// latest, live the published one (version 1 until the workflow is activated again).
	if _, _, err := svc.Create(ctx, r.p, def, flowDef, true); err != nil {
		t.Fatal(err)
	}
	now := flowTools(t, svc, r.p.TenantID)
	if now["run_flow__notes_2"] == nil || now["run_flow__notes_1"] == nil || now["run_flow__notes"].Meta["version"] != "2" || now["run_flow__notes_1"].Meta["version"] != "1" {
		t.Fatalf("tools after version 2: %v", toolNamesOf(now))
	}
	ranVersion := func(tool, args string) int64 {
		t.Helper()
		started, _, err := invokeFlow(t, now[tool], r.p, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		r.caller.next(t).answer(map[string]any{"value": "n1"}, nil)
		v, err := svc.Runs.Wait(ctx, r.p, started["instance_id"].(string), 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		return v.WorkflowVersion
	}
	for _, c := range []struct {
		tool, args string
		want       int64
	}{
		{"run_flow_async__notes", `{"key":"k"}`, 2},
		{"run_flow_async__notes", `{"key":"k","_context":{"environment_id":"draft"}}`, 2},
		{"run_flow_async__notes", `{"key":"k","_context":{"environment_id":"live"}}`, 1},
		{"run_flow_async__notes_1", `{"key":"k"}`, 1},
	} {
		if got := ranVersion(c.tool, c.args); got != c.want {
			t.Errorf("%s %s ran version %d, want %d", c.tool, c.args, got, c.want)
		}
	}
	if err := svc.SetActive(ctx, r.p, "notes", true); err != nil {
		t.Fatal(err)
	}
	if got := ranVersion("run_flow_async__notes", `{"key":"k","_context":{"environment_id":"live"}}`); got != 2 {
		t.Errorf("live after activating version 2 ran version %d", got)
	}
	// Only the newest versions and the live one are kept: version 1's tool then
	// answers that it is no longer kept.
	for range KeptVersions {
		if _, _, err := svc.Create(ctx, r.p, def, flowDef, true); err != nil {
			t.Fatal(err)
		}
	}
	last := flowTools(t, svc, r.p.TenantID)
	if last["run_flow__notes_1"] != nil || last["run_flow__notes_2"] == nil || last["run_flow__notes_7"] == nil || last["run_flow__notes_3"] == nil {
		t.Errorf("tools after version 7: %v", toolNamesOf(last))
	}
	if _, _, err := invokeFlow(t, tools["run_flow__notes_1"], r.p, `{"key":"k"}`); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("run of version 1 once it is no longer kept = %v; want not found", err)
	}
}

// TestFlowToolAliasesAreATenantSetting: workflow_<name> is listed only once an admin
// chose to keep it; it answers as run_workflow does.
func TestFlowToolAliasesAreATenantSetting(t *testing.T) {
	t.Parallel()
	svc, _, r, changed := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(flowDef))
	if _, _, err := svc.Create(ctx, r.p, def, flowDef, false); err != nil {
		t.Fatal(err)
	}
	if tools := flowTools(t, svc, r.p.TenantID); tools["workflow_notes"] != nil {
		t.Fatal("workflow_notes listed without the setting")
	}
	if err := svc.SetToolAliases(ctx, r.p, true); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Fatalf("a member's setting = %v; want forbidden", err)
	}
	admin := r.p
	admin.Role = switchboard.RoleAdmin
	n := len(*changed)
	if err := svc.SetToolAliases(ctx, admin, true); err != nil {
		t.Fatal(err)
	}
	if len(*changed) != n+1 {
		t.Errorf("the setting's change did not refresh the tools")
	}
	alias := flowTools(t, svc, r.p.TenantID)["workflow_notes"]
	if alias == nil || alias.Meta["kind"] != KindAlias || string(alias.OutputSchema) != ResultSchema {
		t.Fatalf("workflow_notes = %+v", alias)
	}
	if other := flowTools(t, svc, "ten_other"); len(other) != 0 {
		t.Errorf("another tenant lists %v", toolNamesOf(other))
	}
}

// TestFlowLifecycle: a deactivated flow keeps its tools, marked [DEACTIVATED], which
// answer that it is deactivated (its query still answers); activated again it runs; a
// deleted one keeps them marked [DELETED] until the grace period ends; every change
// refreshes the tools (list_changed).
func TestFlowLifecycle(t *testing.T) {
	t.Parallel()
	svc, _, r, changed := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	ctx := context.Background()
	def, _ := Parse([]byte(flowDef))
	if _, _, err := svc.Create(ctx, r.p, def, flowDef, false); err != nil {
		t.Fatal(err)
	}
	n := len(*changed)
	if err := svc.SetActive(ctx, r.p, "notes", false); err != nil {
		t.Fatal(err)
	}
	if len(*changed) != n+1 {
		t.Fatal("deactivating did not refresh the tools")
	}
	if err := svc.SetActive(ctx, r.p, "notes", false); err != nil || len(*changed) != n+1 {
		t.Fatalf("deactivating again = %v, %d refreshes; want nothing changed", err, len(*changed)-n)
	}
	tools := flowTools(t, svc, r.p.TenantID)
	for _, name := range []string{"run_flow__notes", "run_flow_async__notes_1", "query_flow__notes"} {
		if !strings.HasPrefix(tools[name].Info.Description, "[DEACTIVATED] ") {
			t.Errorf("%s description = %q", name, tools[name].Info.Description)
		}
	}
	if _, _, err := invokeFlow(t, tools["run_flow__notes"], r.p, `{"key":"k"}`); switchboard.CodeOf(err) != switchboard.CodeConflict || !strings.Contains(err.Error(), "deactivated") {
		t.Errorf("run of a deactivated flow = %v", err)
	}
	if _, err := svc.Start(ctx, r.p, "notes", json.RawMessage(`{"key":"k"}`), StartOptions{}); switchboard.CodeOf(err) != switchboard.CodeConflict {
		t.Errorf("start of a deactivated flow = %v", err)
	}
	agent := r.p
	agent.Kind, agent.AgentID = switchboard.PrincipalAgent, "agt_1"
	if err := svc.SetActive(ctx, agent, "notes", true); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Errorf("an agent's activation = %v; want forbidden", err)
	}
	if err := svc.SetActive(ctx, r.p, "notes", true); err != nil {
		t.Fatal(err)
	}
	tools = flowTools(t, svc, r.p.TenantID)
	if strings.HasPrefix(tools["run_flow__notes"].Info.Description, "[") {
		t.Errorf("active description = %q", tools["run_flow__notes"].Info.Description)
	}

	n = len(*changed)
	if err := svc.Delete(ctx, r.p, "notes"); err != nil {
		t.Fatal(err)
	}
	if len(*changed) != n+1 {
		t.Fatal("deleting did not refresh the tools")
	}
	tools = flowTools(t, svc, r.p.TenantID)
	if !strings.HasPrefix(tools["run_flow__notes"].Info.Description, "[DELETED] ") {
		t.Fatalf("deleted description = %q", tools["run_flow__notes"].Info.Description)
	}
	if _, _, err := invokeFlow(t, tools["run_flow__notes"], r.p, `{"key":"k"}`); switchboard.CodeOf(err) != switchboard.CodeNotFound || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("run of a deleted flow = %v", err)
	}
	if _, err := svc.Get(ctx, r.p, "notes"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("get of a deleted flow = %v", err)
	}
	// After the grace period its tools are gone.
	later := time.Now().Add(DefaultToolGrace + time.Hour)
	svc.Store.now = func() time.Time { return later }
	if tools := flowTools(t, svc, r.p.TenantID); len(tools) != 0 {
		t.Errorf("tools after the grace period: %v", toolNamesOf(tools))
	}
	// Its name saved again starts anew, counting its version on.
	svc.Store.now = func() time.Time { return time.Now().UTC() }
	w, created, err := svc.Create(ctx, r.p, def, flowDef, false)
	if err != nil || !created || w.Version != 2 {
		t.Fatalf("save after delete = %+v, %v, %v", w, created, err)
	}
	if d := flowTools(t, svc, r.p.TenantID)["run_flow__notes"].Info.Description; strings.HasPrefix(d, "[") {
		t.Errorf("saved again, description = %q", d)
	}
}

// TestOutputSchemaIsChecked: a definition's output_schema must be an object schema
// that describes only declared outputs; each problem names the field.
func TestOutputSchemaIsChecked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, schema, want string
	}{
		{"not an object schema", `{type: string}`, `must be a JSON Schema with "type": "object"`},
		{"an undeclared output", `{type: object, properties: {value: {type: string}, other: {type: string}}}`, "describes other, which is not one of the outputs"},
		{"not a schema", `{type: object, properties: {value: {type: 12}}}`, "is not a valid JSON Schema"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(flowDef, "output_schema: {type: object, properties: {value: {type: string, enum: [n1, n2]}}}", "output_schema: "+tt.schema, 1)
			def, err := Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile(def)
			ps := ProblemsOf(err)
			if len(ps) != 1 || ps[0].Field != "output_schema" || !strings.Contains(ps[0].Message, tt.want) {
				t.Errorf("problems = %v; want output_schema: %s", err, tt.want)
			}
		})
	}
	def, _ := Parse([]byte(flowDef))
	if _, err := Compile(def); err != nil {
		t.Errorf("a good output_schema: %v", err)
	}
}
