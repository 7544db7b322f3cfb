package hub

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
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
	Tool      string         `json:"tool" jsonschema:"The name of a tool of this endpoint, for example github_create_issue"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"The tool's arguments, as its input schema says"`
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

func (t *Tools) runAsync() providers.Op {
	return &providers.Operation[RunAsyncInput, Run]{
		Name: RunAsync, Title: "Run a tool in the background",
		Description: "Start any tool of this endpoint in the background and get a run_id at once; read its state and output later with switchboard_get_run. Use it for calls that may take long. The arguments are the tool's own, validated now.",
		Hints:       providers.Hints{Destructive: true},
		Run: func(ctx context.Context, c *providers.Call, in RunAsyncInput) (Run, error) {
			v, err := t.StartRun(ctx, principal(c), in.Tool, in.Arguments)
			return runOf(v), err
		},
	}
}

// StartRun starts a run of a tool for the principal and answers at once: a saved
// workflow's as the workflow's run, any other tool's as a run of its call. A tool of
// the hub's own is refused.
func (t *Tools) StartRun(ctx context.Context, p switchboard.Principal, tool string, args map[string]any) (runs.View, error) {
	if strings.TrimSpace(tool) == "" {
		return runs.View{}, switchboard.Invalid("tool", "is required")
	}
	raw := json.RawMessage("{}")
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return runs.View{}, switchboard.Invalid("arguments", "must be a JSON object")
		}
		raw = b
	}
	return t.StartRaw(ctx, p, tool, raw)
}

// StartRaw is StartRun with the arguments as JSON; it answers handled false for a
// tool no provider of a tenant's tools names (the caller then starts the run of the
// call itself).
func (t *Tools) StartRaw(ctx context.Context, p switchboard.Principal, tool string, args json.RawMessage) (runs.View, error) {
	if t.IsOwn(tool) {
		return runs.View{}, switchboard.Invalid("tool", "must be a tool of a connected account, not a switchboard_ tool")
	}
	if w, ok := t.workflowOf(ctx, p, tool); ok {
		return t.Workflows.Start(ctx, p, w, args, workflows.StartOptions{})
	}
	conn := ""
	if t.Connections != nil {
		c, err := t.Connections.ConnectionFor(ctx, p, tool, "")
		if err != nil {
			return runs.View{}, err
		}
		conn = c
	}
	return t.Runs.Start(ctx, p, runs.Call{Tool: tool, ConnectionID: conn, Args: args, Origin: runs.OriginAsync})
}

// IsOwn reports whether a tool is one of the hub's own (a registered tool of this
// provider).
func (t *Tools) IsOwn(tool string) bool {
	if t.Registry == nil {
		return strings.HasPrefix(tool, providers.HubToolPrefix)
	}
	rt, ok := t.Registry.Tool(tool)
	return ok && rt.Provider != nil && rt.Provider.Name == Provider
}

// workflowOf returns the workflow whose tool is named, when it is a saved workflow's
// of the principal's tenant.
func (t *Tools) workflowOf(ctx context.Context, p switchboard.Principal, tool string) (string, bool) {
	if t.Workflows == nil || t.Registry == nil {
		return "", false
	}
	rt, err := t.Registry.TenantTool(ctx, p.TenantID, tool)
	if err != nil || !workflows.IsTool(rt) {
		return "", false
	}
	return rt.Info.Name, true
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
