package workflows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
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

// TestMCPToolsStayOffAgentURLs: an agent URL lists only the tools its agent was
// given, so the workflow tools, which agents do not select, are not served there.
func TestMCPToolsStayOffAgentURLs(t *testing.T) {
	t.Parallel()
	svc, p, _ := workflows.ServiceForTest(t)
	ext := mcpadapter.WorkflowsExtension(mcpadapter.WorkflowsOptions{Service: svc})
	ctx := switchboard.WithPrincipal(context.Background(), p)
	tools, err := ext.Tools(ctx, mcpadapter.Scope{Principal: p})
	if err != nil || len(tools) == 0 {
		t.Fatalf("tenant URL tools %s, %v; want the workflow tools", toolNames(tools), err)
	}
	src := "name: echo\nsteps:\n  - {name: one, tool: flow_read, args: {key: \"k\"}}\n"
	if got := callTool(t, ctx, tools, "create_workflow", map[string]any{"definition": src}); got["status"] != "created" {
		t.Fatalf("create = %v", got)
	}
	tools, err = ext.Tools(ctx, mcpadapter.Scope{Principal: p, AgentID: "agt_1"})
	if err != nil || len(tools) != 0 {
		t.Fatalf("agent URL tools %s, %v; want none", toolNames(tools), err)
	}
}
