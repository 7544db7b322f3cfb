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
}

// runsExt is the runs extension: the management tools of asynchronous runs, runs as
// resources, confirmations before destructive calls, and MCP tasks.
type runsExt struct {
	o      RunsOptions
	links  *taskLinks
	states requestStates
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
	x := &runsExt{o: o, states: requestStates{key: o.StateKey, now: time.Now}}
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
	toolRunAsync          = "switchboard_run_async"
	toolGetRun            = "switchboard_get_run"
	toolCancelRun         = "switchboard_cancel_run"
	toolListRuns          = "switchboard_list_runs"
	toolSubmitElicitation = "switchboard_submit_elicitation"
	runsTemplate          = "switchboard://runs/{id}"
)

func mgmtTool(name, title, description, schema, output string, readOnly, destructive, idempotent, openWorld bool) mcp.Tool {
	return mcp.Tool{
		Name: name, Description: description, // title in annotations only, as for provider tools
		RawInputSchema:  json.RawMessage(schema),
		RawOutputSchema: listedOutput(output),
		Annotations: mcp.ToolAnnotation{
			Title: title, ReadOnlyHint: mcp.ToBoolPtr(readOnly), DestructiveHint: mcp.ToBoolPtr(destructive),
			IdempotentHint: mcp.ToBoolPtr(idempotent), OpenWorldHint: mcp.ToBoolPtr(openWorld),
		},
	}
}

// listedOutput is a management tool's output schema as tools/list serves it: its type
// and required fields (providers.ListedOutput), like the hub tools'.
func listedOutput(full string) json.RawMessage {
	listed, err := providers.ListedOutput(json.RawMessage(full))
	if err != nil {
		panic(fmt.Sprintf("management tool output schema: %v", err)) // a constant of this file
	}
	return listed
}

// runViewProperties are the properties of a run as the tools answer it (runs.View).
const runViewProperties = `"run_id":{"type":"string","description":"The run's id"},` +
	`"tool":{"type":"string","description":"The tool it runs"},` +
	`"connection_id":{"type":"string","description":"The connection it runs on"},` +
	`"state":{"type":"string","enum":["working","input_required","completed","failed","canceled"],"description":"Where the run is"},` +
	`"output":{"description":"The tool's structured output, once completed"},` +
	`"error":{"type":"object","description":"Why it failed or was canceled","properties":{"code":{"type":"string"},"message":{"type":"string"}}},` +
	`"elicitation":{"type":"object","description":"The confirmation it waits for (input_required) or was given","properties":{"message":{"type":"string"},"expires_at":{"type":"string","format":"date-time"},"action":{"type":"string"}}},` +
	`"created_at":{"type":"string","format":"date-time"},"updated_at":{"type":"string","format":"date-time"},` +
	`"started_at":{"type":"string","format":"date-time"},"finished_at":{"type":"string","format":"date-time"}`

// runViewSchema is the output schema of the tools that answer one run.
const runViewSchema = `{"type":"object","properties":{` + runViewProperties + `},"required":["run_id","tool","state","created_at","updated_at"]}`

// runListSchema is the output schema of switchboard_list_runs.
const runListSchema = `{"type":"object","properties":{"runs":{"type":"array","items":{"type":"object","properties":{` + runViewProperties + `}}},"next_cursor":{"type":"string","description":"Pass it as cursor for the next page"}},"required":["runs"]}`

const runIDSchema = `{"type":"object","properties":{"run_id":{"type":"string","description":"The run's id (run_…), as switchboard_run_async or switchboard_list_runs gave it"}},"required":["run_id"],"additionalProperties":false}`

// tools returns the management tools of a scope.
func (x *runsExt) tools(_ context.Context, sc Scope) ([]server.ServerTool, error) {
	return []server.ServerTool{
		{Tool: mgmtTool(toolRunAsync, "Run a tool in the background",
			"Start any tool of this endpoint in the background and get a run_id at once; read its state and output later with switchboard_get_run. Use it for calls that may take long. The arguments are the tool's own, validated now.",
			`{"type":"object","properties":{"tool":{"type":"string","description":"The name of a tool of this endpoint, for example github_create_issue"},"arguments":{"type":"object","description":"The tool's arguments, as its input schema says"}},"required":["tool"],"additionalProperties":false}`,
			runViewSchema, false, true, false, true), Handler: x.runAsync(sc)},
		{Tool: mgmtTool(toolGetRun, "Get a run",
			"Read one of your runs: state (working, input_required, completed, failed, canceled), timestamps, the output once completed, the error once failed.",
			runIDSchema, runViewSchema, true, false, true, false), Handler: x.getRun},
		{Tool: mgmtTool(toolCancelRun, "Cancel a run",
			"Cancel one of your runs that has not ended. A run already executing is stopped, but its upstream request may already have taken effect.",
			runIDSchema, runViewSchema, false, false, true, false), Handler: x.cancelRun},
		{Tool: mgmtTool(toolListRuns, "List runs",
			"List your runs, newest first, without outputs (switchboard_get_run has them).",
			`{"type":"object","properties":{"state":{"type":"string","enum":["working","input_required","completed","failed","canceled"],"description":"Only runs in this state"},"limit":{"type":"integer","minimum":1,"maximum":100,"description":"At most this many runs (default 50)"},"cursor":{"type":"string","description":"The next_cursor of the previous page"}},"additionalProperties":false}`,
			runListSchema, true, false, true, false), Handler: x.listRuns},
		{Tool: mgmtTool(toolSubmitElicitation, "Submit a confirmation",
			"Give the person's answer to a run waiting for their confirmation (state input_required): accept runs it, decline or cancel runs nothing. Only submit what the person answered.",
			`{"type":"object","properties":{"run_id":{"type":"string","description":"The run waiting for the confirmation"},"response":{"type":"object","description":"The person's answer","properties":{"action":{"type":"string","enum":["accept","decline","cancel"],"description":"accept runs it; decline or cancel runs nothing"},"content":{"type":"object","description":"The form's content, if any"}},"required":["action"]}},"required":["run_id","response"],"additionalProperties":false}`,
			runViewSchema, false, true, false, true), Handler: x.submitElicitation},
	}, nil
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
		if strings.HasPrefix(in.Tool, "switchboard_") {
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

// getRun reads a run; a workflow run that ended failed, canceled or partial answers
// isError, as the workflow's own tool does.
func (x *runsExt) getRun(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, v, err := x.byID(ctx, req, x.o.Runs.Get)
	if res != nil && workflows.EndedInError(v) {
		res.IsError = true
	}
	return res, err
}

func (x *runsExt) cancelRun(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, _, err := x.byID(ctx, req, x.o.Runs.Cancel)
	return res, err
}

// byID runs fn on the run the call names, and answers the run it returned.
func (x *runsExt) byID(ctx context.Context, req mcp.CallToolRequest, fn func(context.Context, switchboard.Principal, string) (runs.View, error)) (*mcp.CallToolResult, runs.View, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, runs.View{}, errors.New("no principal in context")
	}
	var in struct {
		RunID string `json:"run_id"`
	}
	if err := decodeRunArgs(req, &in); err != nil {
		return x.toolError(ctx, err), runs.View{}, nil
	}
	if strings.TrimSpace(in.RunID) == "" {
		return x.toolError(ctx, switchboard.Invalid("run_id", "is required")), runs.View{}, nil
	}
	v, err := fn(ctx, p, in.RunID)
	if err != nil {
		return x.toolError(ctx, err), runs.View{}, nil
	}
	res, err := viewResult(v)
	return res, v, err
}

func (x *runsExt) listRuns(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	var in struct {
		State  string `json:"state"`
		Limit  int    `json:"limit"`
		Cursor string `json:"cursor"`
	}
	if err := decodeRunArgs(req, &in); err != nil {
		return x.toolError(ctx, err), nil
	}
	list, next, err := x.o.Runs.List(ctx, p, runs.ListOptions{State: runs.State(in.State), Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return x.toolError(ctx, err), nil
	}
	out := struct {
		Runs       []runs.View `json:"runs"`
		NextCursor string      `json:"next_cursor,omitempty"`
	}{Runs: list, NextCursor: next}
	return viewResult(out)
}

func (x *runsExt) submitElicitation(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	var in struct {
		RunID    string `json:"run_id"`
		Response *struct {
			Action  string `json:"action"`
			Content any    `json:"content"`
		} `json:"response"`
	}
	if err := decodeRunArgs(req, &in); err != nil {
		return x.toolError(ctx, err), nil
	}
	switch {
	case strings.TrimSpace(in.RunID) == "":
		return x.toolError(ctx, switchboard.Invalid("run_id", "is required")), nil
	case in.Response == nil:
		return x.toolError(ctx, switchboard.Invalid("response", "is required: {\"action\": \"accept\"}, \"decline\" or \"cancel\"")), nil
	}
	action := in.Response.Action
	switch action {
	case "accept", "decline", "cancel":
	default:
		return x.toolError(ctx, switchboard.Invalid("response.action", "must be accept, decline or cancel")), nil
	}
	// The relayed answer of a run has no form to fill in: only an unticked box declines.
	if ticked, present := confirmBox(in.Response.Content); action == "accept" && present && !ticked {
		action = "decline"
	}
	v, err := x.o.Runs.Answer(ctx, p, in.RunID, action)
	if err != nil {
		return x.toolError(ctx, err), nil
	}
	return viewResult(v)
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
func errorText(err error) string {
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
