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
}

// runsExt is the runs extension: the management tools of asynchronous runs, runs as
// resources, confirmations before destructive calls, and MCP tasks.
type runsExt struct {
	o      RunsOptions
	links  *taskLinks
	states requestStates
	ops    hubOps
}

// RunsExtension returns the extension that serves, at every MCP URL, the management
// tools switchboard_run_async, switchboard_get_run, switchboard_cancel_run,
// switchboard_list_runs and switchboard_submit_elicitation, the resource template
// switchboard://runs/{id} (the caller's own runs only), the confirmation of calls the
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
	x := &runsExt{o: o, states: requestStates{key: o.StateKey, now: time.Now}, ops: newHubOps(&hub.Tools{Runs: o.Runs})}
	x.links = newTaskLinks(func(p switchboard.Principal, runID string) {
		_, _ = o.Runs.Cancel(context.Background(), p, runID)
	})
	return Extension{
		Name:              "runs",
		ServerOptions:     []server.ServerOption{server.WithTaskCapabilities(true, true, true), x.taskHooks()},
		Tools:             x.tools,
		ResourceTemplates: x.templates,
		WrapTool:          x.wrap,
		RunTools:          true,
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
)

// tools returns the management tools of a scope.
func (x *runsExt) tools(_ context.Context, sc Scope) ([]server.ServerTool, error) {
	return []server.ServerTool{
		x.ops.serverTool(toolRunAsync, x.runAsync(sc)),
		x.ops.serverTool(toolGetRun, x.call(toolGetRun, invokeHubOp[hub.RunIDInput])),
		x.ops.serverTool(toolCancelRun, x.call(toolCancelRun, invokeHubOp[hub.RunIDInput])),
		x.ops.serverTool(toolListRuns, x.call(toolListRuns, invokeHubOp[hub.ListRunsInput])),
		x.ops.serverTool(toolSubmitElicitation, x.call(toolSubmitElicitation, invokeHubOp[hub.SubmitInput])),
	}, nil
}

// call answers a call of the named runs tool with its operation.
func (x *runsExt) call(name string, invoke func(context.Context, *providers.Tool, mcp.CallToolRequest, func(context.Context, error) *mcp.CallToolResult) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	t := x.ops[name]
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return invoke(ctx, t, req, x.toolError)
	}
}

// runAsync starts a run of one of the scope's tools.
func (x *runsExt) runAsync(sc Scope) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, errors.New("no principal in context")
		}
		var in struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := decodeRunArgs(req, &in); err != nil {
			return x.hubError(ctx, sc, err), nil
		}
		if strings.TrimSpace(in.Tool) == "" {
			return sc.s.adapter.toolError(switchboard.Invalid("tool", "is required")), nil
		}
		if _, own := x.ops[in.Tool]; own {
			return sc.s.adapter.toolError(switchboard.Invalid("tool", "must be a tool of a connected account, not a switchboard_ tool")), nil
		}
		args := in.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if v, handled, err := sc.startRun(ctx, in.Tool, args); handled {
			if err != nil {
				return x.hubError(ctx, sc, err), nil
			}
			return viewResult(v)
		}
		rreq, prep, b, res := x.prepare(ctx, sc, in.Tool, args)
		if res != nil {
			return res, nil
		}
		confirmed := false
		if prep.NeedsConfirm {
			if res, confirmed = x.gate(ctx, sc, req, prep, b, rreq, runs.OriginAsync); res != nil {
				return res, nil
			}
		}
		v, err := x.o.Runs.Start(ctx, p, runs.Call{Tool: rreq.Tool, ConnectionID: rreq.ConnectionID, Args: rreq.Args, Origin: runs.OriginAsync, Confirmed: confirmed})
		if err != nil {
			return x.hubError(ctx, sc, err), nil
		}
		return viewResult(v)
	}
}

// DescribeError is the message a failed tools/call gives for err: what a failed run
// records, so both say the same (runs.Options.Describe).
func (a *Adapter) DescribeError(err error) string { return a.errorText(err) }

// decodeRunArgs decodes a call's arguments into v, naming the field at fault.
func decodeRunArgs(req mcp.CallToolRequest, v any) error {
	raw, err := rawArguments(req)
	if err != nil {
		return switchboard.Invalid("arguments", "must be a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return switchboard.Invalid(typeErr.Field, "must be a JSON "+typeErr.Value+" of the documented type")
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return switchboard.Invalid(strings.Trim(name, `"`), "is not a known argument")
		}
		return switchboard.Invalid("arguments", "must be a JSON object")
	}
	return nil
}

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

// readRun reads one of the caller's runs as a resource; another's is not found, like
// a missing one.
func (x *runsExt) readRun(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	id, ok := strings.CutPrefix(req.Params.URI, "switchboard://runs/")
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
