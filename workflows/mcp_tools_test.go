package workflows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/workflows"
)

func callTool(t *testing.T, ctx context.Context, tools []server.ServerTool, name string, args any) map[string]any {
	t.Helper()
	for _, st := range tools {
		if st.Tool.Name != name {
			continue
		}
		raw, _ := json.Marshal(args)
		res, err := st.Handler(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: json.RawMessage(raw)}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out map[string]any
		if raw, ok := res.StructuredContent.(json.RawMessage); ok {
			_ = json.Unmarshal(raw, &out)
		}
		if out == nil {
			out = map[string]any{"error_text": res.Content[0].(mcp.TextContent).Text}
		}
		return out
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func toolNames(tools []server.ServerTool) string {
	var n []string
	for _, st := range tools {
		n = append(n, st.Tool.Name)
	}
	return strings.Join(n, ",")
}

func TestMCPToolsCreateListAndRunAWorkflow(t *testing.T) {
	t.Parallel()
	svc, p, answer := workflows.ServiceForTest(t)
	ext := mcpadapter.WorkflowsExtension(mcpadapter.WorkflowsOptions{Service: svc})
	ctx := switchboard.WithPrincipal(context.Background(), p)
	sc := mcpadapter.Scope{Principal: p}
	tools, err := ext.Tools(ctx, sc)
	if err != nil || toolNames(tools) != "run_workflow,list_workflows,create_workflow,cancel_workflow" {
		t.Fatalf("tools %s, %v", toolNames(tools), err)
	}
	bad := callTool(t, ctx, tools, "create_workflow", map[string]any{"definition": "name: echo\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ parms.k }}\"}}\n"})
	if bad["status"] != "error" || !strings.Contains(fmtJSON(bad["problems"]), `"field":"args.key","message":"${{ parms.k }}: column 1: undeclared reference to 'parms'`) || !strings.Contains(fmtJSON(bad["problems"]), `"step":"one"`) {
		t.Fatalf("bad create = %v", bad)
	}
	src := "name: echo\nparameters: {type: object, properties: {k: {type: string}}, required: [k]}\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ params.k }}\"}}\noutputs: {value: \"${{ steps.one.output.value }}\"}\n"
	if got := callTool(t, ctx, tools, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" || got["tool"] != "workflow_echo" {
		t.Fatalf("create = %v", got)
	}
	tools, _ = ext.Tools(ctx, sc)
	if !strings.HasSuffix(toolNames(tools), ",workflow_echo") {
		t.Fatalf("tools after create: %s", toolNames(tools))
	}
	if got := callTool(t, ctx, tools, "list_workflows", map[string]any{"include_running": true}); fmtJSON(got["workflows"]) == "[]" || got["running_count"] != float64(0) {
		t.Fatalf("list = %v", got)
	}
	done := make(chan map[string]any, 1)
	go func() { done <- callTool(t, ctx, tools, "workflow_echo", map[string]any{"k": "hello"}) }()
	answer(map[string]any{"value": "HELLO", "items": []string{}, "count": 0})
	got := testwait.Recv(t, done, "workflow_echo to answer")
	if got["status"] != "success" || fmtJSON(got["outputs"]) != `{"value":"HELLO"}` || got["steps_completed"] != float64(1) || got["workflow_id"] == "" {
		t.Fatalf("run = %v", got)
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAgentURLsListTheirWorkflows: an agent URL lists only the workflow tools its
// agent selected (none of the management tools, no other workflow), and runs them; an
// agent that selected none lists none.
func TestAgentURLsListTheirWorkflows(t *testing.T) {
	t.Parallel()
	svc, p, answer := workflows.ServiceForTest(t)
	ext := mcpadapter.WorkflowsExtension(mcpadapter.WorkflowsOptions{Service: svc})
	ctx := switchboard.WithPrincipal(context.Background(), p)
	tools, err := ext.Tools(ctx, mcpadapter.Scope{Principal: p})
	if err != nil || len(tools) == 0 {
		t.Fatalf("tenant URL tools %s, %v; want the workflow tools", toolNames(tools), err)
	}
	for _, src := range []string{
		"name: echo\nparameters: {type: object, properties: {k: {type: string}}, required: [k]}\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"${{ params.k }}\"}}\noutputs: {value: \"${{ steps.one.output.value }}\"}\n",
		"name: other\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"k\"}}\n",
	} {
		if got := callTool(t, ctx, tools, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" {
			t.Fatalf("create = %v", got)
		}
	}
	none := &agents.Agent{ID: "agt_1", Tools: []agents.Tool{{Tool: "github_get_issue", ConnectionID: "con_1"}}}
	tools, err = ext.Tools(ctx, mcpadapter.Scope{Principal: p, AgentID: none.ID, Agent: none})
	if err != nil || len(tools) != 0 {
		t.Fatalf("tools of an agent without workflows %s, %v; want none", toolNames(tools), err)
	}
	// A workflow deleted since the agent selected it is left out.
	some := &agents.Agent{ID: "agt_2", Tools: []agents.Tool{{Tool: "github_get_issue", ConnectionID: "con_1"}, {Tool: "workflow_echo"}, {Tool: "workflow_gone"}}}
	tools, err = ext.Tools(ctx, mcpadapter.Scope{Principal: p, AgentID: some.ID, Agent: some})
	if err != nil || toolNames(tools) != "workflow_echo" {
		t.Fatalf("tools of an agent with workflow_echo: %s, %v; want workflow_echo alone", toolNames(tools), err)
	}
	if schema := fmtJSON(tools[0].Tool.RawInputSchema); !strings.Contains(schema, `"required":["k"]`) {
		t.Errorf("workflow_echo's input schema at the agent URL = %s; want its parameters", schema)
	}
	done := make(chan map[string]any, 1)
	go func() { done <- callTool(t, ctx, tools, "workflow_echo", map[string]any{"k": "hello"}) }()
	answer(map[string]any{"value": "HELLO", "items": []string{}, "count": 0})
	got := testwait.Recv(t, done, "workflow_echo to answer at the agent URL")
	if got["status"] != "success" || fmtJSON(got["outputs"]) != `{"value":"HELLO"}` {
		t.Fatalf("run at the agent URL = %v", got)
	}
}
