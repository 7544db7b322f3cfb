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
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// RunsOptions configure the runs extension.
type RunsOptions struct {
	// Runs starts and keeps the runs.
	Runs *runs.Executor
	// TaskPoll is how often an MCP task checks a run executing elsewhere (default 1 s).
	TaskPoll time.Duration
	// Logger receives the internal errors the tools hide from agents; nil is
	// slog.Default().
	Logger *slog.Logger
	// StateKey keys the requestState given with every confirmation a tools/call asks
	// for, without which the answer does not count. Required: every node serving the
	// same database must have the same key (derive it from the keyring), as a client's
	// answer may reach another node than its question.
	StateKey []byte
	// Answer renders an ended run that some tool answers in a form of its own (a
	// workflow's run: workflows.Hub.Answer) as an MCP task's result; nil, or handled
	// false, renders the run's output as a direct call would have answered.
	Answer func(ctx context.Context, p switchboard.Principal, v runs.View) (res *providers.ContentResult, handled bool)
	// Flows are the questions of the workflow runs that wait for their person
	// (workflows.Service): a 2026-07-28 task whose run is one shows them as its
	// inputRequests, and tasks/update answers them. Nil: such a task shows only its
	// status message, which says how to answer with submit_flow_elicitation.
	Flows FlowQuestions
}

// FlowQuestions are the questions a workflow's run waits for its person to answer, and
// their answers (workflows.Service).
type FlowQuestions interface {
	Elicitations(ctx context.Context, p switchboard.Principal, instanceID string) (runs.View, []workflows.Elicitation, error)
	SubmitElicitation(ctx context.Context, p switchboard.Principal, instanceID, elicitationID string, resp workflows.ElicitationResponse, how string) (runs.View, error)
}

// runsExt is the runs extension: the management tools of asynchronous runs, runs as
// resources, confirmations before destructive calls, and MCP tasks.
type runsExt struct {
	o      RunsOptions
	links  *taskLinks
	states requestStates
	// inputs are the input requests of the 2026-07-28 tasks running here.
	inputs taskInputsByRun
}

// RunsExtension returns the extension that serves, at every MCP URL, the management
// tools switchboard_run_async, switchboard_get_run, switchboard_cancel_run,
// switchboard_list_runs and switchboard_submit_elicitation, the resource template
// switchboard://runs/{id} (the caller's own runs only; a session subscribed to one hears
// of every change of its state, see Adapter.RunChanged), the confirmation of calls the
// confirm policy names, and task-augmented tools/call. It panics without o.StateKey.
func RunsExtension(o RunsOptions) Extension {
	if o.TaskPoll <= 0 {
		o.TaskPoll = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if len(o.StateKey) == 0 {
		panic(errNoStateKey)
	}
	x := &runsExt{o: o, states: requestStates{key: o.StateKey, now: time.Now}}
	x.links = newTaskLinks(func(p switchboard.Principal, runID string) {
		_, _ = o.Runs.Cancel(context.Background(), p, runID)
	})
	return Extension{
		Name:              "runs",
		ServerOptions:     []server.ServerOption{server.WithTaskCapabilities(true, true, true), x.taskHooks()},
		ResourceTemplates: x.templates,
		Subscribable:      x.subscribable,
		WrapTool:          x.wrap,
		TaskSupport:       true,
		tasks:             x,
	}
}

// Names of the management tools.
const (
	toolRunAsync          = hub.RunAsync
	toolGetRun            = hub.GetRun
	toolCancelRun         = hub.CancelRun
	toolListRuns          = hub.ListRuns
	toolSubmitElicitation = hub.SubmitElicitation
	runsTemplate          = "switchboard://runs/{id}"
	runURIPrefix          = "switchboard://runs/"
)

// DescribeError is the message a failed tools/call gives for err: what a failed run
// records, so both say the same (runs.Options.Describe).
func (a *Adapter) DescribeError(err error) string { return a.errorText(err) }

// toolError is the tool result of a failed runs tool; an internal error's cause, which
// the agent is not shown, is logged.
func (x *runsExt) toolError(ctx context.Context, err error) *mcp.CallToolResult {
	if switchboard.CodeOf(err) == switchboard.CodeInternal {
		x.o.Logger.ErrorContext(ctx, "runs tool failed", "err", err)
	}
	return mcp.NewToolResultError(errorText(err))
}

// hubError is the tool result of a hub tool's call that failed in the runs extension
// (its confirmation policy, arguments, or run could not be read or stored), as the
// adapter renders it; an internal error's cause, which the agent is not shown, is
// logged.
func (x *runsExt) hubError(ctx context.Context, sc Scope, err error) *mcp.CallToolResult {
	if switchboard.CodeOf(err) == switchboard.CodeInternal {
		x.o.Logger.ErrorContext(ctx, "runs extension failed", "tenant", sc.Principal.TenantID, "err", err)
	}
	return sc.s.adapter.toolError(err)
}

// errorText renders an error of the runs tools for the agent.
func errorText(err error) string { return hub.ErrorText(err) }

// templates returns the runs resource template of a scope.
func (x *runsExt) templates(_ context.Context, _ Scope) ([]server.ServerResourceTemplate, error) {
	t := mcp.NewResourceTemplate(runsTemplate, "run",
		mcp.WithTemplateDescription("One of your runs: state, timestamps, and the output once completed."),
		mcp.WithTemplateMIMEType("application/json"))
	return []server.ServerResourceTemplate{{Template: t, Handler: x.readRun}}, nil
}

// subscribable reports whether uri is one of the scope's principal's runs.
func (x *runsExt) subscribable(ctx context.Context, sc Scope, uri string) bool {
	id, ok := strings.CutPrefix(uri, runURIPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return false
	}
	_, err := x.o.Runs.Get(ctx, sc.Principal, id)
	return err == nil
}

// readRun reads one of the caller's runs as a resource; another's is not found, like
// a missing one.
func (x *runsExt) readRun(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	id, ok := strings.CutPrefix(req.Params.URI, runURIPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, switchboard.NotFound("resource " + req.Params.URI)
	}
	v, err := x.o.Runs.Get(ctx, p, id)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return nil, switchboard.NotFound("resource " + req.Params.URI)
		}
		x.o.Logger.ErrorContext(ctx, "read run resource", "run", id, "err", err)
		return nil, errors.New("internal error")
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode run: %w", err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(raw)}}, nil
}

// prepare resolves a call of one of the scope's hub tools and has the router check it
// (which audits a refusal); it answers the result to give instead when the call
// cannot run.
func (x *runsExt) prepare(ctx context.Context, sc Scope, name string, args json.RawMessage) (router.Request, router.Prepared, router.Binding, *mcp.CallToolResult) {
	p, _ := switchboard.PrincipalFrom(ctx)
	rtr := sc.s.adapter.opts.Router
	rreq, _, err := sc.Resolve(ctx, name, args)
	if err != nil {
		rtr.Refused(p, router.Request{Tool: name, Args: args}, err)
		return router.Request{}, router.Prepared{}, router.Binding{}, x.hubError(ctx, sc, err)
	}
	b, ok := sc.binding(name)
	if !ok {
		err := switchboard.NotFound("tool " + name)
		rtr.Refused(p, rreq, err)
		return router.Request{}, router.Prepared{}, router.Binding{}, x.hubError(ctx, sc, err)
	}
	prep, err := rtr.Prepare(ctx, p, rreq)
	if err != nil {
		return router.Request{}, router.Prepared{}, router.Binding{}, x.hubError(ctx, sc, err)
	}
	return rreq, prep, b, nil
}

// wrap puts the confirmation and MCP tasks in front of a hub tool's handler. A call
// the principal's policy cannot cover goes straight to the handler (the router checks
// and audits it there); one it may cover is checked first, then confirmed (see gate)
// before the handler runs it.
func (x *runsExt) wrap(sc Scope, next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, ok := sc.binding(req.Params.Name)
		if !ok {
			return next(ctx, req) // which refuses it
		}
		if sc.s.asksToConnect(ctx) && (b.Unconnected() || connectRetry(req)) {
			// The person connects an account first; the call then comes through here
			// again, on its connection (see connect.go).
			return next(ctx, req)
		}
		if req.Params.Task != nil && (b.Tool.Info.Task == providers.TaskForbidden || isModern(ctx)) {
			// A tool that never runs as a task runs directly whatever the client asks; on
			// 2026-07-28 the server decides which calls are tasks (runs_modern_tasks.go),
			// and a task param is a hint of older clients.
			req.Params.Task = nil
		}
		if req.Params.Task != nil {
			// mcp-go has answered the client with the task and runs this in the
			// background with the HTTP request's context, which ends with that request:
			// nothing here may depend on it (tasks/cancel reaches the run through
			// taskLinks).
			// Nor its place: the task is admitted as a run of its own.
			ctx = limits.WithSlot(context.WithoutCancel(ctx), nil)
		}
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, errors.New("no principal in context")
		}
		rtr := sc.s.adapter.opts.Router
		pol, err := rtr.Policy(ctx, p)
		if err != nil {
			return x.hubError(ctx, sc, err), nil
		}
		if op, ok := b.Tool.Op.(providers.SelfConfirming); ok && req.Params.Task == nil {
			res, confirmed := x.selfConfirm(ctx, sc, op, b, req, p, pol)
			if res != nil {
				return res, nil
			}
			if confirmed {
				ctx = withConfirmed(ctx)
			}
			return next(ctx, req)
		}
		if !pol.Covers(b.Tool) && req.Params.Task == nil {
			return next(ctx, req)
		}
		args, err := rawArguments(req)
		if err != nil {
			err = switchboard.Invalid("arguments", err.Error())
			rtr.Refused(p, router.Request{Tool: b.Tool.Name}, err)
			return sc.s.adapter.toolError(err), nil
		}
		if req.Params.Task != nil {
			rreq, _, err := sc.Resolve(ctx, b.Tool.Name, args)
			if err != nil {
				rtr.Refused(p, router.Request{Tool: b.Tool.Name, Args: args}, err)
				return x.hubError(ctx, sc, err), nil
			}
			return x.runAsTask(ctx, sc, b, req, rreq)
		}
		rreq, prep, b, res := x.prepare(ctx, sc, b.Tool.Name, args)
		if res != nil {
			return res, nil
		}
		if !prep.NeedsConfirm {
			return next(ctx, req)
		}
		res, confirmed := x.gate(ctx, sc, req, prep, b, rreq, runs.OriginConfirm)
		if res != nil {
			return res, nil
		}
		if confirmed {
			ctx = withConfirmed(ctx)
		}
		return next(ctx, req)
	}
}

// selfConfirm takes in the client's form the confirmation that a tool confirming
// itself (providers.SelfConfirming: a workflow, run_workflow, switchboard_run_async)
// says the call needs under the caller's policy, when the policy lets the client relay
// it and the client can show the form: confirmed when the person accepted, else the
// result to answer instead (the form, or the person's decline). It answers nil, false
// when the form is not the way: the tool then leaves its run waiting input_required on
// its approval page, or reports what is wrong.
func (x *runsExt) selfConfirm(ctx context.Context, sc Scope, op providers.SelfConfirming, b router.Binding, req mcp.CallToolRequest, p switchboard.Principal, pol router.Policy) (*mcp.CallToolResult, bool) {
	if !canElicit(ctx) && req.Params.RequestState == "" || pol.Confirm == router.ConfirmNever || pol.Approval == router.ApprovalPerson {
		return nil, false
	}
	args, err := rawArguments(req)
	if err != nil {
		return nil, false
	}
	shown, needed, err := op.Confirmation(ctx, &providers.Call{Tenant: p.TenantID, Principal: p}, args)
	if err != nil || !needed {
		return nil, false
	}
	call := stateCall{p: p, agentID: sc.AgentID, origin: runs.OriginConfirm, rreq: router.Request{Tool: b.Tool.Name, Args: args}}
	res, confirmed, _ := confirmInForm(ctx, x.states, sc.s.adapter.opts.Router, req, call, shown)
	return res, confirmed
}

// isModern reports whether the request of ctx is of the stateless 2026-07-28 era.
func isModern(ctx context.Context) bool {
	info := server.RequestProtocolInfoFromContext(ctx)
	return info != nil && info.Modern
}
