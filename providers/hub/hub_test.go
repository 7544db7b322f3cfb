package hub_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/workflows"
)

// The hub's tools register as a connectionless provider under their own names, each
// with schemas reflected from its Go types.
func TestSpecRegisters(t *testing.T) {
	reg := providers.NewRegistry()
	tools := &hub.Tools{Workflows: &workflows.Service{}}
	if err := reg.Register(tools.Spec()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{hub.RunAsync, hub.GetRun, hub.CancelRun, hub.ListRuns, hub.SubmitElicitation,
		hub.RunWorkflow, hub.ListWorkflows, hub.CreateWorkflow, hub.CancelWorkflow} {
		tool, ok := reg.Tool(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if !tool.Provider.Connectionless {
			t.Errorf("%s: provider not connectionless", name)
		}
		in, out := tool.Listed()
		t.Logf("%s in=%s out=%s", name, in, out)
		var s map[string]any
		if err := json.Unmarshal(in, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s input schema %s", name, in)
		}
	}
}
