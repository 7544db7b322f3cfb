package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// WorkflowsOptions configure the workflows extension.
type WorkflowsOptions struct {
	Service *workflows.Service
	// Wait bounds how long a call waits for its workflow run to end before it answers
	// with the run's id to follow with switchboard_get_run (default 30 s).
	Wait   time.Duration
	Logger *slog.Logger
	// StateKey keys the requestState of the confirmation a workflow tool asks in the
	// client's form (RunsOptions.StateKey, the same key). Without it a run that needs a
	// confirmation always waits for it input_required.
	StateKey []byte
}

// WorkflowsExtension serves, at every tenant MCP URL, run_workflow, list_workflows,
// create_workflow and cancel_workflow, and each saved workflow as a tool of its own,
// workflow_<name>. An agent URL lists only the workflow tools its agent selected. The list changes (list_changed) when workflows are saved or
// deleted: wire Service.Changed to Adapter.Refresh.
func WorkflowsExtension(o WorkflowsOptions) Extension {
	if o.Wait <= 0 {
		o.Wait = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	x := &workflowsExt{o: o, states: requestStates{key: o.StateKey, now: time.Now},
		ops: newHubOps(&hub.Tools{Runs: o.Service.Runs, Workflows: o.Service})}
	return Extension{Name: "workflows", Tools: x.tools, StartRun: x.startRun}
}

type workflowsExt struct {
	o      WorkflowsOptions
	states requestStates
	ops    hubOps
}

func (x *workflowsExt) tools(ctx context.Context, sc Scope) ([]server.ServerTool, error) {
	if sc.AgentID != "" {
		return x.agentTools(ctx, sc)
	}
	out := []server.ServerTool{
		x.ops.serverTool(hub.RunWorkflow, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return x.runWorkflow(ctx, sc, req)
		}),
		x.ops.serverTool(hub.ListWorkflows, x.call(hub.ListWorkflows, invokeHubOp[hub.ListWorkflowsInput])),
		x.ops.serverTool(hub.CreateWorkflow, x.call(hub.CreateWorkflow, invokeHubOp[hub.CreateWorkflowInput])),
		x.ops.serverTool(hub.CancelWorkflow, x.call(hub.CancelWorkflow, invokeHubOp[hub.CancelWorkflowInput])),
	}
	ws, err := x.o.Service.List(ctx, sc.Principal, "")
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		t, err := x.workflowTool(sc, w)
		if err != nil {
			continue // a name or schema no tool can have: the workflow's own pages say so
		}
		out = append(out, t)
	}
	return out, nil
}

// agentTools are the workflow tools an agent selected, in its order: an agent URL
// lists only the tools its agent was given. A workflow deleted since is left out.
func (x *workflowsExt) agentTools(ctx context.Context, sc Scope) ([]server.ServerTool, error) {
	if sc.Agent == nil {
		return nil, nil
	}
	var out []server.ServerTool
	for _, t := range sc.Agent.Tools {
		name, ok := strings.CutPrefix(t.Tool, workflows.ToolPrefix)
		if !ok || t.ConnectionID != "" {
			continue
		}
		w, err := x.o.Service.Get(ctx, sc.Principal, name)
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		t, err := x.workflowTool(sc, w)
		if err != nil {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// workflowTool is a saved workflow as a tool of its own: its parameters are the input
// schema. Where the scope serves MCP tasks, a task-augmented call of it is a task
// backed by the workflow's run.
func (x *workflowsExt) workflowTool(sc Scope, w workflows.Workflow) (server.ServerTool, error) {
	def, err := x.o.Service.Tool(w)
	if err != nil {
		return server.ServerTool{}, err
	}
	tasks := sc.taskRunner()
	t := newToolDef(def, tasks != nil, providers.ProfileFull).tool
	name := w.Name
	return server.ServerTool{Tool: t, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, errors.New("no principal in context")
		}
		args, err := rawArguments(req)
		if err != nil {
			return mcp.NewToolResultError(errorText(switchboard.Invalid("arguments", "must be a JSON object"))), nil
		}
		if req.Params.Task != nil && tasks != nil {
			start := func(ctx context.Context, p switchboard.Principal) (runs.View, error) {
				return x.o.Service.Start(ctx, p, name, args, workflows.StartOptions{})
			}
			return tasks.task(ctx, sc, req, start, func(ctx context.Context, v runs.View) (*mcp.CallToolResult, error) { return x.answer(ctx, p, v) })
		}
		return x.start(ctx, sc, req, name, args, workflows.StartOptions{})
	}}, nil
}

// startRun starts a run of one of the scope's workflow tools and answers at once
// (switchboard_run_async); at an agent URL only the workflows its agent selected are
// the scope's.
func (x *workflowsExt) startRun(ctx context.Context, sc Scope, tool string, args json.RawMessage) (runs.View, bool, error) {
	name, ok := strings.CutPrefix(tool, workflows.ToolPrefix)
	if !ok || (sc.AgentID != "" && !selects(sc.Agent, tool)) {
		return runs.View{}, false, nil
	}
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return runs.View{}, true, errors.New("no principal in context")
	}
	v, err := x.o.Service.Start(ctx, p, name, x.fullArgs(ctx, sc, p, name, args), workflows.StartOptions{})
	return v, true, err
}

// fullArgs turns arguments written for the workflow's tool as the scope lists it
// (its schema profile) back into the workflow's own parameters, as its tool's
// handler does (listedAs); arguments it cannot turn are given as they came, for the
// workflow's parameters to refuse.
func (x *workflowsExt) fullArgs(ctx context.Context, sc Scope, p switchboard.Principal, name string, args json.RawMessage) json.RawMessage {
	a := sc.s.adapter
	if a.opts.SchemaProfile == providers.ProfileFull {
		return args
	}
	w, err := x.o.Service.Get(ctx, p, name)
	if err != nil {
		return args
	}
	def, err := x.o.Service.Tool(w)
	if err != nil {
		return args
	}
	l, err := a.listings.get(a.opts.SchemaProfile, newToolDef(def, false, providers.ProfileFull).tool.RawInputSchema)
	if err != nil {
		return args
	}
	if full, err := l.Args(args); err == nil {
		return full
	}
	return args
}

// selects reports whether an agent selected a workflow's tool.
func selects(agent *agents.Agent, tool string) bool {
	if agent == nil {
		return false
	}
	for _, t := range agent.Tools {
		if t.Tool == tool && t.ConnectionID == "" {
			return true
		}
	}
	return false
}

func (x *workflowsExt) runWorkflow(ctx context.Context, sc Scope, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	var in struct {
		Name          string          `json:"workflow_name"`
		Parameters    json.RawMessage `json:"parameters"`
		DryRun        bool            `json:"dry_run"`
		Timeout       int             `json:"timeout"`
		ParallelLimit int             `json:"parallel_limit"`
	}
	if err := decodeRunArgs(req, &in); err != nil {
		return x.toolError(ctx, err), nil
	}
	if strings.TrimSpace(in.Name) == "" {
		return x.toolError(ctx, switchboard.Invalid("workflow_name", "is required")), nil
	}
	if in.DryRun {
		plan, err := x.o.Service.DryRun(ctx, p, in.Name, in.Parameters)
		if err != nil {
			return x.toolError(ctx, err), nil
		}
		return viewResult(map[string]any{"status": "success", "message": "dry run: nothing was run", "plan": plan})
	}
	return x.start(ctx, sc, req, in.Name, in.Parameters, workflows.StartOptions{ParallelLimit: in.ParallelLimit, Timeout: time.Duration(in.Timeout) * time.Second})
}

// start starts a run and waits, up to the bound, for its end. A run the caller's
// policy wants confirmed is confirmed first in the client's form where it can show one
// (as any tool's call is); else it starts input_required, linking its approval page.
func (x *workflowsExt) start(ctx context.Context, sc Scope, req mcp.CallToolRequest, name string, params json.RawMessage, o workflows.StartOptions) (*mcp.CallToolResult, error) {
	p, _ := switchboard.PrincipalFrom(ctx)
	res, confirmed := x.confirm(ctx, sc, req, p, name, params)
	if res != nil {
		return res, nil
	}
	o.Confirmed = confirmed
	v, err := x.o.Service.Start(ctx, p, name, params, o)
	if err != nil {
		return x.toolError(ctx, err), nil
	}
	if v.State == runs.StateWorking {
		v = x.wait(sc.s.withProgress(ctx, req), p, name, v)
	}
	return x.answer(ctx, p, v)
}

// pollRun is how often a call waiting for its workflow run reads the run (one held
// by another node, and the steps of one whose call reports progress).
const pollRun = 250 * time.Millisecond

// wait waits, up to the bound, for a run to end. A call that carries a progress token
// is sent notifications/progress as the run's steps end (progress: the steps ended,
// total: the workflow's steps), read from the run's step records, which every node
// sees.
func (x *workflowsExt) wait(ctx context.Context, p switchboard.Principal, name string, v runs.View) runs.View {
	wctx, cancel := context.WithTimeout(ctx, x.o.Wait)
	defer cancel()
	if !providers.WantsProgress(ctx) {
		if v2, err := x.o.Service.Runs.Wait(wctx, p, v.ID, pollRun); err == nil || v2.ID != "" {
			v = v2
		}
		return v
	}
	total := 0
	if _, prog, err := x.o.Service.Program(ctx, p, name); err == nil {
		total = len(prog.Steps)
	}
	reported := 0
	for {
		pctx, pcancel := context.WithTimeout(wctx, pollRun)
		v2, err := x.o.Service.Runs.Wait(pctx, p, v.ID, pollRun)
		pcancel()
		if err == nil || v2.ID != "" {
			v = v2
		}
		if done, serr := x.o.Service.StepsEnded(ctx, p, v.ID); serr == nil && done > reported {
			reported = done
			providers.ReportProgress(ctx, float64(done), float64(total), fmt.Sprintf("%d of %d steps done", done, total))
		}
		if v.State.Final() || wctx.Err() != nil || err != nil && pctx.Err() == nil {
			return v
		}
	}
}

// confirm takes in the client's form the confirmation a run of the workflow needs
// under the caller's policy, when the policy lets the client relay it and the client
// can show the form: confirmed when the person accepted, else the result to answer
// instead (the form, or the person's decline). It answers nil, false when the form is
// not the way (Start then starts the run input_required, or reports what is wrong).
func (x *workflowsExt) confirm(ctx context.Context, sc Scope, req mcp.CallToolRequest, p switchboard.Principal, name string, params json.RawMessage) (*mcp.CallToolResult, bool) {
	if len(x.states.key) == 0 || !canElicit(ctx) && req.Params.RequestState == "" {
		return nil, false
	}
	svc := x.o.Service
	pol, err := svc.Router.Policy(ctx, p)
	if err != nil || pol.Confirm == router.ConfirmNever || pol.Approval == router.ApprovalPerson {
		return nil, false
	}
	plan, err := svc.DryRun(ctx, p, name, params)
	if err != nil || !plan.NeedsConfirm {
		return nil, false
	}
	args, err := rawArguments(req)
	if err != nil {
		return nil, false
	}
	shown := workflows.ConfirmMessage(name, plan)
	if len(params) > 0 {
		shown += " Parameters: " + clipText(string(params), 1000)
	}
	call := stateCall{p: p, agentID: sc.AgentID, origin: runs.OriginConfirm, rreq: router.Request{Tool: workflows.ToolPrefix + name, Args: args}}
	res, confirmed, _ := confirmInForm(ctx, x.states, svc.Router, req, call, shown)
	return res, confirmed
}

// answer renders a workflow run as the tools answer it (workflows.Service.Answer),
// isError when it ended failed, canceled or partial.
func (x *workflowsExt) answer(ctx context.Context, p switchboard.Principal, v runs.View) (*mcp.CallToolResult, error) {
	ans := x.o.Service.Answer(ctx, p, v)
	res, err := viewResult(ans)
	if res != nil {
		res.IsError = ans.IsError
	}
	return res, err
}

// call answers a call of the named workflow management tool with its operation.
func (x *workflowsExt) call(name string, invoke func(context.Context, *providers.Tool, mcp.CallToolRequest, func(context.Context, error) *mcp.CallToolResult) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	t := x.ops[name]
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return invoke(ctx, t, req, x.toolError)
	}
}

func (x *workflowsExt) toolError(ctx context.Context, err error) *mcp.CallToolResult {
	if switchboard.CodeOf(err) == switchboard.CodeInternal {
		x.o.Logger.ErrorContext(ctx, "workflows tool failed", "err", err)
	}
	return mcp.NewToolResultError(errorText(err))
}
