package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/workflows"
)

// seedFieldTable is ../workflows/testdata/seed004_fields.json, the fields the
// orchestrator specification lists (workflows' TestSeedToolsConformance checks the same
// table against the tools' full schemas).
type seedFieldTable struct {
	Tools map[string]struct {
		In         [][2]string `json:"in"`
		Out        [][2]string `json:"out"`
		WhenFailed []string    `json:"when_failed"`
	} `json:"tools"`
	StepResult [][2]string `json:"step_result"`
}

// jsonTypeOf is a decoded JSON value's type as a schema names it.
func jsonTypeOf(v any) string {
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
	return "unknown"
}

// ofType reports whether a value, or a schema's type (a string or a list), admits
// typ; an integer is a number too, and "" admits any.
func ofType(got any, typ string) bool {
	if typ == "" {
		return true
	}
	switch v := got.(type) {
	case string:
		return v == typ || typ == "number" && v == "integer"
	case []any:
		for _, e := range v {
			if ofType(e, typ) {
				return true
			}
		}
	}
	return false
}

// TestGoSDKSeedToolsConformance: over each protocol version, the official Go SDK's
// client finds every parameter the orchestrator specification lists for run_workflow,
// list_workflows, create_workflow and cancel_workflow in their listed input schemas,
// with its type, and every answer field it lists, with its type, in their answers
// (error_message in a failed run's).
func TestGoSDKSeedToolsConformance(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../workflows/testdata/seed004_fields.json")
	if err != nil {
		t.Fatal(err)
	}
	var table seedFieldTable
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Tools) != 4 {
		t.Fatalf("seed004_fields.json: %v", err)
	}
	db := testdb.SQLite(t)
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			e := newWorkflowsEnv(t, db)
			ctx := context.Background()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-seed", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: e.srv.URL + "/mcp/" + e.ann.TenantSlug, HTTPClient: &http.Client{Transport: keyTransport{key: keyAnn}}, DisableStandaloneSSE: true,
			}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for name, spec := range table.Tools {
				i := slices.IndexFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == name })
				if i < 0 {
					t.Fatalf("%s is not listed", name)
				}
				schema, _ := json.Marshal(res.Tools[i].InputSchema)
				var in struct {
					Properties map[string]map[string]any `json:"properties"`
				}
				_ = json.Unmarshal(schema, &in)
				for _, f := range spec.In {
					if p, ok := in.Properties[f[0]]; !ok || !ofType(p["type"], f[1]) && !anyOfType(p, f[1]) && !objectAsText(p, f[1]) {
						t.Errorf("%s's listed input %s = %v; want type %s", name, f[0], p, f[1])
					}
				}
			}

			answer := func(name string, args map[string]any, failed bool) map[string]any {
				t.Helper()
				r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var got map[string]any
				sdkStructured(t, r, &got)
				spec := table.Tools[name]
				for _, f := range spec.Out {
					if !failed && slices.Contains(spec.WhenFailed, f[0]) {
						continue
					}
					if v, ok := got[f[0]]; !ok || !ofType(jsonTypeOf(v), f[1]) {
						t.Errorf("%s answered %s = %v; want a %s in %v (%s)", name, f[0], v, f[1], got, sdkText(r))
					}
				}
				return got
			}
			for _, src := range []string{noteWorkflow, holdWorkflow, failedWorkflow} {
				answer("create_workflow", map[string]any{"definition": strings.ReplaceAll(src, "CONN", e.connA), "overwrite": true}, false)
			}
			ran := answer("run_workflow", map[string]any{"workflow_name": "note", "parameters": map[string]any{"text": "x"}, "dry_run": false, "timeout": 60, "parallel_limit": 2}, false)
			steps, _ := ran["step_results"].([]any)
			if len(steps) != 1 {
				t.Fatalf("run_workflow step_results = %v", ran)
			}
			for _, f := range table.StepResult {
				if v, ok := steps[0].(map[string]any)[f[0]]; !ok || !ofType(jsonTypeOf(v), f[1]) {
					t.Errorf("step result %s = %v; want a %s", f[0], v, f[1])
				}
			}
			if ran["status"] != "success" {
				t.Errorf("run_workflow = %v", ran)
			}
			if failed := answer("run_workflow", map[string]any{"workflow_name": "failing"}, true); failed["status"] != "failed" {
				t.Errorf("run_workflow of a failing workflow = %v", failed)
			}
			answer("list_workflows", map[string]any{"category": "", "include_running": true}, false)
			// A run held at its step, canceled with a reason.
			held, err := e.workflows.Start(ctx, e.ann, "hold", nil, workflows.StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			started := struct{ InstanceID string }{held.ID}
			if got := answer("cancel_workflow", map[string]any{"workflow_id": started.InstanceID, "reason": "User requested"}, false); got["status"] != "cancelled" {
				t.Errorf("cancel_workflow = %v", got)
			}
		})
	}
}

// objectAsText reports whether a listed argument the specification types object is
// the JSON text of one: the portable schema profile (the default) lists free-form
// objects so, for clients whose strict schemas refuse them; the hub takes an object
// there too (the calls below send one).
func objectAsText(schema map[string]any, typ string) bool {
	desc, _ := schema["description"].(string)
	return typ == "object" && ofType(schema["type"], "string") && strings.Contains(desc, "JSON text of an object")
}

// anyOfType reports whether one of a schema's anyOf branches has the type.
func anyOfType(schema map[string]any, typ string) bool {
	list, _ := schema["anyOf"].([]any)
	for _, b := range list {
		if m, ok := b.(map[string]any); ok && ofType(m["type"], typ) {
			return true
		}
	}
	return false
}
