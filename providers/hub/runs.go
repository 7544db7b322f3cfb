package hub

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// Run is a run as the runs tools answer it (runs.View).
type Run struct {
	ID           string       `json:"run_id" jsonschema:"The run's id"`
	Tool         string       `json:"tool" jsonschema:"The tool it runs"`
	ConnectionID string       `json:"connection_id,omitempty" jsonschema:"The connection it runs on"`
	State        string       `json:"state" jsonschema:"Where the run is" schema:"enum=working|input_required|completed|failed|canceled"`
	Output       any          `json:"output,omitempty" jsonschema:"The tool's structured output, once completed"`
	Error        *RunError    `json:"error,omitempty" jsonschema:"Why it failed or was canceled"`
	Elicitation  *Elicitation `json:"elicitation,omitempty" jsonschema:"The confirmation it waits for (input_required) or was given"`
	ApprovalURL  string       `json:"approval_url,omitempty" jsonschema:"The page where a person approves or declines the run, while it waits for its confirmation"`
	CreatedAt    time.Time    `json:"created_at" jsonschema:"When the run was created"`
	UpdatedAt    time.Time    `json:"updated_at" jsonschema:"When the run last changed"`
	StartedAt    *time.Time   `json:"started_at,omitempty" jsonschema:"When it started executing"`
	FinishedAt   *time.Time   `json:"finished_at,omitempty" jsonschema:"When it ended"`

	endedInError bool // a workflow run that ended failed, canceled or partial
}

// RunError is why a run failed or was canceled.
type RunError struct {
	Code    string `json:"code" jsonschema:"The error's code"`
	Message string `json:"message" jsonschema:"What went wrong"`
}

// Elicitation is the confirmation a run waits for or was given.
type Elicitation struct {
	Message   string     `json:"message" jsonschema:"What the person is asked"`
	ExpiresAt *time.Time `json:"expires_at,omitempty" jsonschema:"When the question lapses"`
	Action    string     `json:"action,omitempty" jsonschema:"The person's answer"`
}

// runOf renders a run's view.
func runOf(v runs.View) Run {
	r := Run{ID: v.ID, Tool: v.Tool, ConnectionID: v.ConnectionID, State: string(v.State), ApprovalURL: v.ApprovalURL,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, StartedAt: v.StartedAt, FinishedAt: v.FinishedAt}
	if len(v.Output) > 0 {
		r.Output = v.Output
	}
	if v.Error != nil {
		r.Error = &RunError{Code: v.Error.Code, Message: v.Error.Message}
	}
	if v.Elicitation != nil {
		r.Elicitation = &Elicitation{Message: v.Elicitation.Message, ExpiresAt: v.Elicitation.ExpiresAt, Action: v.Elicitation.Action}
	}
	return r
}

// RunAsyncInput is the input of switchboard_run_async.
type RunAsyncInput struct {
	Tool       string         `json:"tool" jsonschema:"The name of a tool of this endpoint, for example github_create_issue"`
	Arguments  map[string]any `json:"arguments,omitempty" jsonschema:"The tool's arguments, as its input schema says"`
	Connection string         `json:"connection,omitempty" jsonschema:"Which of your accounts the tool runs as, by its label or id, when you have several of its provider"`
}

// RunIDInput names one of the caller's runs.
type RunIDInput struct {
	RunID string `json:"run_id" jsonschema:"The run's id (run_…), as switchboard_run_async or switchboard_list_runs gave it"`
}

// ListRunsInput is the input of switchboard_list_runs.
type ListRunsInput struct {
	State  string `json:"state,omitempty" jsonschema:"Only runs in this state" schema:"enum=working|input_required|completed|failed|canceled"`
	Limit  int    `json:"limit,omitempty" jsonschema:"At most this many runs (default 50)" schema:"minimum=1,maximum=100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"The next_cursor of the previous page"`
}

// RunList is a page of the caller's runs.
type RunList struct {
	Runs       []Run  `json:"runs" jsonschema:"The runs, newest first, without outputs"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass it as cursor for the next page"`
}

// SubmitInput is the input of switchboard_submit_elicitation.
type SubmitInput struct {
	RunID    string    `json:"run_id" jsonschema:"The run waiting for the confirmation"`
	Response *Response `json:"response" jsonschema:"The person's answer"`
}

// Response is a person's answer to a run's confirmation.
type Response struct {
	Action  string         `json:"action" jsonschema:"accept runs it; decline or cancel runs nothing" schema:"enum=accept|decline|cancel"`
	Content map[string]any `json:"content,omitempty" jsonschema:"The form's content, if any"`
}

// Call runs a hub tool's typed function as the call's principal.
func principal(c *providers.Call) switchboard.Principal { return c.Principal }

// runAsyncOp is switchboard_run_async: it starts a run of any tool of the caller's and
// answers at once. It confirms itself: the confirmation the started tool needs under
// the caller's policy is asked in the client's form where it can (Confirmation), else
// the run waits for it on its approval page.
type runAsyncOp struct {
	*providers.Operation[RunAsyncInput, Run]
	t *Tools
}

func (t *Tools) runAsync() providers.Op {
	op := runAsyncOp{t: t}
	op.Operation = &providers.Operation[RunAsyncInput, Run]{
		Name: RunAsync, Title: "Run a tool in the background",
		Description: "Start any tool of this endpoint in the background and get a run_id at once; read its state and output later with switchboard_get_run. Use it for calls that may take long. The arguments are the tool's own, validated now.",
		Hints:       providers.Hints{Destructive: true},
		Run: func(ctx context.Context, c *providers.Call, in RunAsyncInput) (Run, error) {
			call, err := t.asyncCall(ctx, principal(c), in)
			if err != nil {
				return Run{}, err
			}
			call.Confirmed = c.Confirmed
			v, err := t.Runs.Start(ctx, principal(c), call)
			return runOf(v), err
		},
	}
	return op
}

// StartsTool marks switchboard_run_async as starting the tool its arguments name.
func (runAsyncOp) StartsTool() {}

// Confirmation says whether the tool asked for needs the person's confirmation under
// the caller's policy, and what it will do.
func (o runAsyncOp) Confirmation(ctx context.Context, c *providers.Call, args json.RawMessage) (string, bool, error) {
	var in RunAsyncInput
	if err := json.Unmarshal(args, &in); err != nil {
		return "", false, nil // the call itself names what is wrong
	}
	call, err := o.t.asyncCall(ctx, principal(c), in)
	if err != nil {
		return "", false, nil
	}
	if o.t.Registry != nil && o.t.Workflows != nil {
		if rt, err := o.t.Registry.TenantTool(ctx, c.Tenant, call.Tool); err == nil && workflows.IsTool(rt) {
			params, _, err := workflows.SplitContext(call.Args)
			if err != nil {
				return "", false, nil // the call itself names what is wrong
			}
			return o.t.Workflows.Confirmation(ctx, principal(c), rt.Info.Name, params)
		}
	}
	if o.t.Connections == nil {
		return "", false, nil
	}
	prep, err := o.t.Connections.Prepare(ctx, principal(c), router.Request{Tool: call.Tool, ConnectionID: call.ConnectionID, Args: call.Args})
	if err != nil || !prep.NeedsConfirm {
		return "", false, nil
	}
	return runs.Summary(prep.Tool, prep.Account()) + " Arguments: " + clip(string(call.Args), 1000), true, nil
}

// takesOwn reports whether the named tool (registered, or one of the tenant's own) has
// an argument of that name of its own.
func (t *Tools) takesOwn(ctx context.Context, p switchboard.Principal, tool, arg string) bool {
	if t.Registry == nil {
		return false
	}
	rt, ok := t.Registry.Tool(tool)
	if !ok {
		var err error
		if rt, err = t.Registry.TenantTool(ctx, p.TenantID, tool); err != nil {
			return false
		}
	}
	return rt.TakesArgument(arg)
}

// clip cuts s to its first n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// asyncCall is the run switchboard_run_async starts: the tool, the connection it runs
// on (the one named, else the caller's only one of its provider) and its arguments.
// switchboard_run_async itself is refused: a run of it would only start another.
func (t *Tools) asyncCall(ctx context.Context, p switchboard.Principal, in RunAsyncInput) (runs.Call, error) {
	if strings.TrimSpace(in.Tool) == "" {
		return runs.Call{}, switchboard.Invalid("tool", "is required")
	}
	if in.Tool == RunAsync {
		return runs.Call{}, switchboard.Invalid("tool", "is switchboard_run_async itself; name the tool to run in the background")
	}
	named := strings.TrimSpace(in.Connection)
	if c, ok := in.Arguments[providers.ConnectionArgument].(string); ok && !t.takesOwn(ctx, p, in.Tool, providers.ConnectionArgument) {
		// The tool as an MCP URL lists it for a caller with several accounts of its
		// provider: the account among its arguments.
		if named == "" {
			named = strings.TrimSpace(c)
		}
		args := make(map[string]any, len(in.Arguments))
		for k, v := range in.Arguments {
			if k != providers.ConnectionArgument {
				args[k] = v
			}
		}
		in.Arguments = args
	}
	raw := json.RawMessage("{}")
	if in.Arguments != nil {
		b, err := json.Marshal(in.Arguments)
		if err != nil {
			return runs.Call{}, switchboard.Invalid("arguments", "must be a JSON object")
		}
		raw = b
	}
	conn := ""
	if t.Connections != nil {
		c, err := t.Connections.ConnectionFor(ctx, p, in.Tool, named)
		if err != nil {
			return runs.Call{}, err
		}
		conn = c
	}
	return runs.Call{Tool: in.Tool, ConnectionID: conn, Args: raw, Origin: runs.OriginAsync}, nil
}

func (t *Tools) getRun() providers.Op {
	return failing[RunIDInput, Run]{Operation: &providers.Operation[RunIDInput, Run]{
		Name: GetRun, Title: "Get a run",
		Description: "Read one of your runs: state (working, input_required, completed, failed, canceled), timestamps, the output once completed, the error once failed.",
		Hints:       providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in RunIDInput) (Run, error) {
			return t.byID(ctx, principal(c), in, t.Runs.Get)
		},
	}, failed: func(r Run) bool { return r.endedInError }}
}

func (t *Tools) cancelRun() providers.Op {
	return &providers.Operation[RunIDInput, Run]{
		Name: CancelRun, Title: "Cancel a run",
		Description: "Cancel one of your runs that has not ended. A run already executing is stopped, but its upstream request may already have taken effect.",
		Hints:       providers.Hints{Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in RunIDInput) (Run, error) {
			return t.byID(ctx, principal(c), in, t.Runs.Cancel)
		},
	}
}

// byID runs fn on the named run and answers the run it returned; a workflow run that
// ended failed, canceled or partial is marked so.
func (t *Tools) byID(ctx context.Context, p switchboard.Principal, in RunIDInput, fn func(context.Context, switchboard.Principal, string) (runs.View, error)) (Run, error) {
	if strings.TrimSpace(in.RunID) == "" {
		return Run{}, switchboard.Invalid("run_id", "is required")
	}
	v, err := fn(ctx, p, in.RunID)
	if err != nil {
		return Run{}, err
	}
	r := runOf(v)
	r.endedInError = workflows.EndedInError(v)
	return r, nil
}

func (t *Tools) listRuns() providers.Op {
	return &providers.Operation[ListRunsInput, RunList]{
		Name: ListRuns, Title: "List runs",
		Description: "List your runs, newest first, without outputs (switchboard_get_run has them).",
		Hints:       providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in ListRunsInput) (RunList, error) {
			list, next, err := t.Runs.List(ctx, principal(c), runs.ListOptions{State: runs.State(in.State), Limit: in.Limit, Cursor: in.Cursor})
			if err != nil {
				return RunList{}, err
			}
			out := RunList{Runs: make([]Run, 0, len(list)), NextCursor: next}
			for _, v := range list {
				out.Runs = append(out.Runs, runOf(v))
			}
			return out, nil
		},
	}
}

func (t *Tools) submitElicitation() providers.Op {
	return &providers.Operation[SubmitInput, Run]{
		Name: SubmitElicitation, Title: "Submit a confirmation",
		Description: "Give the person's answer to a run waiting for their confirmation (state input_required): accept runs it, decline or cancel runs nothing. Only submit what the person answered.",
		Hints:       providers.Hints{Destructive: true},
		Run: func(ctx context.Context, c *providers.Call, in SubmitInput) (Run, error) {
			switch {
			case strings.TrimSpace(in.RunID) == "":
				return Run{}, switchboard.Invalid("run_id", "is required")
			case in.Response == nil:
				return Run{}, switchboard.Invalid("response", "is required: {\"action\": \"accept\"}, \"decline\" or \"cancel\"")
			}
			action := in.Response.Action
			switch action {
			case "accept", "decline", "cancel":
			default:
				return Run{}, switchboard.Invalid("response.action", "must be accept, decline or cancel")
			}
			// The relayed answer of a run has no form to fill in: only an unticked box declines.
			if ticked, present := in.Response.Content["confirm"].(bool); action == "accept" && present && !ticked {
				action = "decline"
			}
			v, err := t.Runs.Answer(ctx, principal(c), in.RunID, action)
			return runOf(v), err
		},
	}
}
