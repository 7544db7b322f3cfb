// Package hub is the provider of the hub's own tools: runs in the background
// (switchboard_run_async and the tools that follow a run), saved workflows'
// management (run_workflow, list_workflows, create_workflow, cancel_workflow) and tool
// search mode's tools (search_tools, describe_tool, call_tool). They run on no
// connection, as the caller, through the router like any other tool.
//
// Start from [Tools], which registers the hub's tools with a registry, and
// [SearchSpec].
package hub

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// Provider is the name of the hub's own provider; it starts its runs tools' names.
const Provider = providers.HubToolPrefix

// Names of the hub's tools.
const (
	RunAsync          = "switchboard_run_async"
	GetRun            = "switchboard_get_run"
	CancelRun         = "switchboard_cancel_run"
	ListRuns          = "switchboard_list_runs"
	SubmitElicitation = "switchboard_submit_elicitation"
	RunWorkflow       = "run_workflow"
	ListWorkflows     = "list_workflows"
	CreateWorkflow    = "create_workflow"
	CancelWorkflow    = "cancel_workflow"
)

// Tools serves the hub's tools. Runs is required; without Workflows the workflow
// tools are left out.
type Tools struct {
	Runs      *runs.Executor
	Workflows *workflows.Service
	// Registry says which provider a tool named to switchboard_run_async is of.
	Registry *providers.Registry
	// Connections picks the connection a run started with switchboard_run_async runs
	// on: the caller's only one for its tool (the router).
	Connections ConnectionPicker
	// Search, when set, adds tool search mode's tools (SearchSpec): without a surface's
	// scope they search and call the caller's tools as it binds them (the router).
	Search Router
}

// ConnectionPicker picks the connection a call of a tool runs on, and checks a call
// before it is started as a run (router.Router).
type ConnectionPicker interface {
	ConnectionFor(ctx context.Context, p switchboard.Principal, tool, named string) (string, error)
	Prepare(ctx context.Context, p switchboard.Principal, req router.Request) (router.Prepared, error)
}

// WorkflowsProvider is the name of the provider of the saved workflows' management
// tools (run_workflow, list_workflows, create_workflow, cancel_workflow).
const WorkflowsProvider = "hub_workflows"

// Spec is the provider of the run tools: connectionless, its tools named as they are
// listed. switchboard_run_async leaves the confirmation to the run of what it starts
// (ConfirmsItself). It is ambient: every caller has its tools, an agent's key without
// selecting them, as each acts only on the caller's own runs and tools; a tenant's or
// agent's run-tools setting decides whether an MCP URL lists them.
func (t *Tools) Spec() providers.Spec {
	return providers.Spec{Name: Provider, Title: "Switchboard", Description: "Background runs: start any of your tools in the background, follow, answer and cancel your runs.",
		Connectionless: true, Ambient: true, OwnNames: true, ConfirmsItself: true,
		Operations: []providers.Op{t.runAsync(), t.getRun(), t.cancelRun(), t.listRuns(), t.submitElicitation()}}
}

// Register registers the hub's providers in reg: with Search tool search mode's
// tools, the run tools, and with Workflows the workflows' management tools.
func (t *Tools) Register(reg *providers.Registry) error {
	if t.Search != nil {
		// First: in search mode its tools head the list.
		if err := reg.Register(SearchSpec(t.Search)); err != nil {
			return err
		}
	}
	if err := reg.Register(t.Spec()); err != nil {
		return err
	}
	if t.Workflows == nil {
		return nil
	}
	return reg.Register(t.WorkflowsSpec())
}

// WorkflowsSpec is the provider of the saved workflows' management tools: connectionless,
// named as they are listed, and picked for an agent like any other tool. run_workflow
// leaves the confirmation to the workflow's run (ConfirmsItself).
func (t *Tools) WorkflowsSpec() providers.Spec {
	return providers.Spec{Name: WorkflowsProvider, Title: "Manage workflows", Description: "Run, list, create and cancel the tenant's saved workflows.",
		Connectionless: true, OwnNames: true, ConfirmsItself: true,
		Operations: []providers.Op{t.runWorkflow(), t.listWorkflows(), t.createWorkflow(), t.cancelWorkflow(), t.listFlows(), t.cancelFlow(), t.submitFlowElicitation(), t.replayFlowPendingElicitation()}}
}

// ErrorText renders an error of a hub tool for the caller: an internal error's cause
// is not shown.
func ErrorText(err error) string {
	e := switchboard.AsError(err)
	switch {
	case e.Code == switchboard.CodeInternal:
		return "Switchboard failed (internal error); the operator has the details."
	case e.Field != "":
		return fmt.Sprintf("Invalid argument %q: %s.", e.Field, e.Message)
	default:
		return e.Message
	}
}

// failing is an operation whose output may say it failed (a workflow run that ended
// failed): such an output is answered as a failed result carrying it.
type failing[In, Out any] struct {
	*providers.Operation[In, Out]
	failed func(Out) bool
}

// Invoke runs the operation and marks a failed output as a failed result.
func (o failing[In, Out]) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	out, err := o.Operation.Invoke(ctx, c, args)
	if err != nil {
		return nil, err
	}
	v, _ := out.(Out)
	if o.failed(v) {
		return providers.JSONContent(v, true)
	}
	return v, nil
}
