package providers

import "strings"

// HubToolPrefix starts the names of the hub's own MCP tools (switchboard_run_async and
// the like): no remote MCP server's tool may take such a name.
const HubToolPrefix = "switchboard"

// WorkflowToolPrefix starts the tool of each saved workflow (workflow_<name>).
const WorkflowToolPrefix = "workflow_"

// FlowToolPrefixes start the names of each saved workflow's flow tools
// (run_flow__<name>, run_flow_async__<name>, query_flow__<name>): no tool a connection
// brings may take such a name.
var FlowToolPrefixes = []string{"run_flow_", "query_flow_"}

// flowToolName reports whether name starts as a saved workflow's flow tools do.
func flowToolName(name string) bool {
	for _, p := range FlowToolPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// IsWorkflowTool reports whether name is one of the hub's tools that manage
// workflows, on every MCP URL.
func IsWorkflowTool(name string) bool {
	switch name {
	case "run_workflow", "list_workflows", "create_workflow", "cancel_workflow", "list_flows", "cancel_flow",
		"submit_flow_elicitation", "replay_flow_pending_elicitation":
		return true
	}
	return false
}

// The tools of tool search mode, which an MCP URL serves in place of its full list.
const (
	SearchToolName   = "search_tools"
	DescribeToolName = "describe_tool"
	CallToolName     = "call_tool"
)

// IsSearchTool reports whether name is one of tool search mode's tools.
func IsSearchTool(name string) bool {
	switch name {
	case SearchToolName, DescribeToolName, CallToolName:
		return true
	}
	return false
}

// ReservedToolName reports whether a tool name belongs to the hub: a registered
// provider's tool, one of the hub's own tools (the workflow tools, tool search mode's),
// or one starting with HubToolPrefix, WorkflowToolPrefix or a FlowToolPrefixes one. A tool a connection brings
// itself (a remote MCP server's) under such a name is left out, so a tool of the hub's
// is never shadowed.
func (r *Registry) ReservedToolName(name string) bool {
	if strings.HasPrefix(name, HubToolPrefix) || strings.HasPrefix(name, WorkflowToolPrefix) || flowToolName(name) || IsWorkflowTool(name) || IsSearchTool(name) {
		return true
	}
	if _, ok := r.tools[name]; ok {
		return true
	}
	_, deferred := r.deferredFor(name)
	return deferred
}

// ReservedPrefix reports whether a prefix of tool names (a remote MCP server's name,
// its tools being named prefix_tool) could name a tool of the hub's: it starts with
// HubToolPrefix, or it and a registered provider's name are equal or one is the other
// followed by "_" (github_get would name a tool github_get_me; google, a tool
// google_drive_list of a provider google_drive). Providers whose tools exist per
// connection name none of theirs after themselves and reserve nothing. It returns the
// name it collides with.
func (r *Registry) ReservedPrefix(prefix string) (string, bool) {
	if strings.HasPrefix(prefix, HubToolPrefix) {
		return HubToolPrefix, true
	}
	if w := strings.TrimSuffix(WorkflowToolPrefix, "_"); prefix == w || strings.HasPrefix(prefix, WorkflowToolPrefix) {
		return w, true
	}
	for _, p := range FlowToolPrefixes {
		// A server named run_flow names its tools run_flow_<tool>.
		if w := strings.TrimSuffix(p, "_"); prefix == w || strings.HasPrefix(prefix, p) {
			return w, true
		}
	}
	for _, name := range r.order {
		if r.specs[name].PerConnection() {
			continue // its tools are named by its connections (a remote server's own name)
		}
		if prefix == name || strings.HasPrefix(prefix, name+"_") || strings.HasPrefix(name, prefix+"_") {
			return name, true
		}
	}
	if r.late != nil {
		for name := range r.late.sources { // whatever their load makes of them
			if prefix == name || strings.HasPrefix(prefix, name+"_") || strings.HasPrefix(name, prefix+"_") {
				return name, true
			}
		}
	}
	return "", false
}
