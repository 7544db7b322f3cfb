package mcpadapter

import (
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
)

// TestScopeBindings: an agent URL serves the agent's selection, each tool on its
// connection, a connectionless tool (a saved workflow) only when selected on none, and
// the ambient tools (the hub's) without selection; the tenant URL serves everything;
// the run-tools setting takes the tools of background runs out of either, and only
// those.
func TestScopeBindings(t *testing.T) {
	github := &providers.Spec{Name: "github", Title: "GitHub"}
	wf := &providers.Spec{Name: "workflows", Connectionless: true}
	hubSpec := &providers.Spec{Name: hub.Provider, Connectionless: true, Ambient: true}
	manage := &providers.Spec{Name: hub.WorkflowsProvider, Connectionless: true}
	tool := func(name string, spec *providers.Spec) *providers.Tool {
		return &providers.Tool{Name: name, Provider: spec}
	}
	all := []router.Binding{
		{Tool: tool("github_get_issue", github), Connections: []router.ConnectionRef{{ID: "con_1", Label: "octo"}, {ID: "con_2", Label: "work"}}},
		{Tool: tool("workflow_echo", wf)},
		{Tool: tool("workflow_other", wf)},
		{Tool: tool(hub.ListRuns, hubSpec)},
		{Tool: tool(hub.ListWorkflows, manage)},
	}
	names := func(bs []router.Binding) string {
		var out []string
		for _, b := range bs {
			n := b.Tool.Name
			for _, c := range b.Connections {
				n += "@" + c.ID
			}
			out = append(out, n)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		name     string
		agent    *agents.Agent
		runTools bool
		want     string
	}{
		{"tenant URL", nil, true, "github_get_issue@con_1@con_2,workflow_echo,workflow_other,switchboard_list_runs,list_workflows"},
		{"tenant URL without run tools", nil, false, "github_get_issue@con_1@con_2,workflow_echo,workflow_other,list_workflows"},
		{"agent with a workflow", &agents.Agent{Tools: []agents.Tool{{Tool: "github_get_issue", ConnectionID: "con_2"}, {Tool: "workflow_echo"}, {Tool: "workflow_gone"}}}, true,
			"github_get_issue@con_2,workflow_echo,switchboard_list_runs"},
		{"agent with a workflow bound to a connection", &agents.Agent{Tools: []agents.Tool{{Tool: "workflow_echo", ConnectionID: "con_1"}}}, true,
			"switchboard_list_runs"},
		{"agent that picked a hub tool, without run tools", &agents.Agent{Tools: []agents.Tool{{Tool: "workflow_other"}, {Tool: hub.ListWorkflows}}}, false, "workflow_other,list_workflows"},
	} {
		if got := names(scopeBindings(all, c.agent, c.runTools)); got != c.want {
			t.Errorf("%s: %s\nwant %s", c.name, got, c.want)
		}
	}
}
