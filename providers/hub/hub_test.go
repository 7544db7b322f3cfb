package hub_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/workflows"
)

// The hub's tools register as two connectionless providers under their own names, each
// tool with schemas reflected from its Go types: the run tools, ambient (every caller
// has them), and the workflows' management tools, which an agent is given by picking
// them.
func TestSpecRegisters(t *testing.T) {
	reg := providers.NewRegistry()
	tools := &hub.Tools{Workflows: &workflows.Service{}}
	if err := tools.Register(reg); err != nil {
		t.Fatal(err)
	}
	ambient := map[string]bool{hub.RunAsync: true, hub.GetRun: true, hub.CancelRun: true, hub.ListRuns: true, hub.SubmitElicitation: true}
	for _, name := range []string{hub.RunAsync, hub.GetRun, hub.CancelRun, hub.ListRuns, hub.SubmitElicitation,
		hub.RunWorkflow, hub.ListWorkflows, hub.CreateWorkflow, hub.CancelWorkflow} {
		tool, ok := reg.Tool(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if !tool.Provider.Connectionless {
			t.Errorf("%s: provider not connectionless", name)
		}
		if tool.Provider.Ambient != ambient[name] {
			t.Errorf("%s: provider %s ambient %t, want %t", name, tool.Provider.Name, tool.Provider.Ambient, ambient[name])
		}
		in, out := tool.Listed()
		t.Logf("%s in=%s out=%s", name, in, out)
		var s map[string]any
		if err := json.Unmarshal(in, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s input schema %s", name, in)
		}
	}
}

// TestRunAsyncTakesTheAccountFromTheArguments: the account an MCP URL lists among a
// tool's arguments is taken out of them as the run's connection, for a tool the
// registry does not hold as well (one a connection brings), without failing.
func TestRunAsyncTakesTheAccountFromTheArguments(t *testing.T) {
	reg := providers.NewRegistry()
	tools := &hub.Tools{Registry: reg}
	if err := tools.Register(reg); err != nil {
		t.Fatal(err)
	}
	call, err := tools.AsyncCallForTest(context.Background(), switchboard.Principal{TenantID: "ten_a"},
		hub.RunAsyncInput{Tool: "docs_search", Arguments: map[string]any{"query": "q", "connection": "Work docs"}})
	if err != nil {
		t.Fatal(err)
	}
	if call.Tool != "docs_search" || string(call.Args) != `{"query":"q"}` {
		t.Errorf("run of %s with %s; want docs_search with the connection taken out of its arguments", call.Tool, call.Args)
	}
	if _, err := tools.AsyncCallForTest(context.Background(), switchboard.Principal{TenantID: "ten_a"}, hub.RunAsyncInput{Tool: hub.RunAsync}); switchboard.AsError(err).Field != "tool" {
		t.Errorf("run_async of itself: %v; want refused naming tool", err)
	}
}
