package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// RunWorkflowInput is the input of run_workflow.
type RunWorkflowInput struct {
	Name          string         `json:"workflow_name" jsonschema:"The workflow's name"`
	Parameters    map[string]any `json:"parameters,omitempty" jsonschema:"Its parameters, as its parameters schema says"`
	DryRun        bool           `json:"dry_run,omitempty" jsonschema:"Check and plan only"`
	Timeout       *int           `json:"timeout,omitempty" jsonschema:"Overall workflow timeout, in seconds" schema:"minimum=1,maximum=86400"`
	ParallelLimit *int           `json:"parallel_limit,omitempty" jsonschema:"Max concurrent parallel steps" schema:"minimum=1,maximum=32"`
}

// Params are the run's parameters as JSON (nil when none were given).
func (in RunWorkflowInput) Params() json.RawMessage {
	if in.Parameters == nil {
		return nil
	}
	raw, err := json.Marshal(in.Parameters)
	if err != nil {
		return nil
	}
	return raw
}

// StartOptions are the run's options.
func (in RunWorkflowInput) StartOptions() workflows.StartOptions {
	var o workflows.StartOptions
	if in.ParallelLimit != nil {
		o.ParallelLimit = *in.ParallelLimit
	}
	if in.Timeout != nil {
		o.Timeout = time.Duration(*in.Timeout) * time.Second
	}
	return o
}

// check refuses a timeout or parallel_limit out of its range, naming the field.
func (in RunWorkflowInput) check() error {
	if in.ParallelLimit != nil && (*in.ParallelLimit < 1 || *in.ParallelLimit > workflows.MaxParallelLimit) {
		return switchboard.Invalid("parallel_limit", fmt.Sprintf("must be between 1 and %d, not %d", workflows.MaxParallelLimit, *in.ParallelLimit))
	}
	if in.Timeout != nil && (*in.Timeout < 1 || *in.Timeout > 86400) {
		return switchboard.Invalid("timeout", fmt.Sprintf("must be between 1 and 86400 seconds, not %d", *in.Timeout))
	}
	return nil
}

// ListWorkflowsInput is the input of list_workflows.
type ListWorkflowsInput struct {
	Category       string `json:"category,omitempty" jsonschema:"Only this category"`
	IncludeRunning bool   `json:"include_running,omitempty" jsonschema:"Count your runs under way"`
}

// WorkflowList is the answer of list_workflows.
type WorkflowList struct {
	Workflows    []WorkflowItem `json:"workflows" jsonschema:"List of workflow definitions"`
	RunningCount int            `json:"running_count" jsonschema:"Number of your workflow runs under way"`
	Running      []RunningItem  `json:"running,omitempty" jsonschema:"Your workflow runs under way (include_running)"`
}

// RunningItem is one workflow run under way, as list_workflows answers it.
type RunningItem struct {
	WorkflowID string    `json:"workflow_id" jsonschema:"The run's id"`
	Workflow   string    `json:"workflow" jsonschema:"The workflow it runs"`
	Version    int64     `json:"version" jsonschema:"The workflow's version it runs"`
	State      string    `json:"state" jsonschema:"working, or input_required while it waits for a person"`
	CreatedAt  time.Time `json:"created_at" jsonschema:"When it started"`
}

// WorkflowItem is one saved workflow as list_workflows answers it.
type WorkflowItem struct {
	Name        string    `json:"name" jsonschema:"The workflow's name"`
	Description string    `json:"description" jsonschema:"What it does"`
	Category    string    `json:"category" jsonschema:"Its category"`
	Tool        string    `json:"tool" jsonschema:"The workflow's own tool, which runs it and waits"`
	Version     int64     `json:"version" jsonschema:"Its version, counting its saves"`
	State       string    `json:"state" jsonschema:"active, or deactivated: it does not run" schema:"enum=active|deactivated"`
	Path        string    `json:"workflow_path" jsonschema:"Path to the saved workflow"`
	UpdatedAt   time.Time `json:"updated_at" jsonschema:"When it was last saved"`
}

// WorkflowPath is where a saved workflow is: its REST resource.
func WorkflowPath(name string) string { return "/api/workflows/" + name }

// CreateWorkflowInput is the input of create_workflow.
type CreateWorkflowInput struct {
	Name       string `json:"name,omitempty" jsonschema:"The workflow's name; the definition's name when left out"`
	Definition any    `json:"definition" jsonschema:"The definition: an object, or its YAML or JSON text"`
	Overwrite  bool   `json:"overwrite,omitempty" jsonschema:"Replace the workflow of that name"`
}

// Created is the answer of create_workflow.
type Created struct {
	Status   string              `json:"status" jsonschema:"created, updated, or error when it was not saved" schema:"enum=created|updated|error"`
	Path     string              `json:"workflow_path,omitempty" jsonschema:"Path to the saved workflow"`
	Name     string              `json:"name,omitempty" jsonschema:"The workflow's name"`
	Tool     string              `json:"tool,omitempty" jsonschema:"The workflow's own tool"`
	Version  int64               `json:"version,omitempty" jsonschema:"Its version"`
	Problems []workflows.Problem `json:"problems,omitempty" jsonschema:"What is wrong with the definition, each naming its step and field"`
	Message  string              `json:"message,omitempty" jsonschema:"Why it was not saved"`
}

// CancelWorkflowInput is the input of cancel_workflow.
type CancelWorkflowInput struct {
	ID     string `json:"workflow_id" jsonschema:"The run's id"`
	Reason string `json:"reason,omitempty" jsonschema:"Why, for the record"`
}

// Canceled is the answer of cancel_workflow.
type Canceled struct {
	Status         string `json:"status" jsonschema:"cancelled, or error when the run was not cancelled (it had finished)" schema:"enum=cancelled|error"`
	StepsCompleted int    `json:"steps_completed" jsonschema:"Steps completed before cancellation"`
	// State is the run's state after the call; Message says what happened to a run
	// that had finished.
	State   string `json:"state,omitempty" jsonschema:"The run's state: canceled, or how it finished"`
	Message string `json:"message,omitempty" jsonschema:"What happened, when the run had finished already"`
}

// runWorkflowOp is run_workflow: it answers in the workflow's result, failed when the
// run ended failed, canceled or partial.
type runWorkflowOp struct{ t *Tools }

// runWorkflowInfo says what run_workflow is.
var runWorkflowInfo = providers.Info{Name: RunWorkflow, Title: "Run a workflow",
	Description: "Run a saved workflow with its parameters. Answers with the result when it ends within the call, else with its workflow_id to follow with switchboard_get_run. dry_run checks it and says what it would do without running anything.",
	Hints:       providers.Hints{Destructive: true},
	// A run may take minutes, or wait for its person: a task wherever the client takes tasks.
	Task: providers.TaskPreferred}

func (t *Tools) runWorkflow() providers.Op { return runWorkflowOp{t} }

func (o runWorkflowOp) Info() providers.Info { return runWorkflowInfo }

func (o runWorkflowOp) InputSchema() (*jsonschema.Schema, error) {
	return providers.Reflect[RunWorkflowInput]()
}

// OutputSchema is a workflow run's result (workflows.ResultSchema).
func (o runWorkflowOp) OutputSchema() (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(workflows.ResultSchema), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Invoke plans the run (dry_run) or runs it and answers how it ended.
func (o runWorkflowOp) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	in, err := readRunWorkflow(args)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.DryRun {
		return o.t.DryRun(ctx, c.Principal, in)
	}
	so := in.StartOptions()
	so.Confirmed = c.Confirmed
	so.Audited = true // the router records run_workflow's call
	so.ToEnd = o.ownRun(ctx, c.Principal)
	return o.t.Workflows.RunAndAnswer(ctx, c.Principal, in.Name, in.Params(), so)
}

// WaitsFor names the workflow a run of run_workflow waits for and the timeout its
// arguments give it (workflows.WorkflowWaiter): a run of run_workflow lasts as long as
// its workflow may. A dry run runs none.
func (o runWorkflowOp) WaitsFor(args json.RawMessage) (string, time.Duration, bool) {
	in, err := readRunWorkflow(args)
	if err != nil || in.DryRun {
		return "", 0, false
	}
	return in.Name, in.StartOptions().Timeout, true
}

var _ workflows.WorkflowWaiter = runWorkflowOp{}

// ownRun reports whether the call executes as a run of run_workflow of its own (an MCP
// task, switchboard_run_async), which no request waits on: it then waits for the
// workflow's end. A workflow step calling run_workflow executes in its workflow's run.
func (o runWorkflowOp) ownRun(ctx context.Context, p switchboard.Principal) bool {
	id, ok := runs.IDFrom(ctx)
	if !ok || o.t.Runs == nil {
		return false
	}
	v, err := o.t.Runs.Get(ctx, p, id)
	return err == nil && v.Kind != runs.KindWorkflow && v.Tool == RunWorkflow
}

// Confirmation says whether the run asked for needs the person's confirmation under
// the caller's policy (a dry run never does).
func (o runWorkflowOp) Confirmation(ctx context.Context, c *providers.Call, args json.RawMessage) (string, bool, error) {
	in, err := readRunWorkflow(args)
	if err != nil || in.DryRun {
		return "", false, err
	}
	return o.t.Workflows.Confirmation(ctx, c.Principal, in.Name, in.Params())
}

// readRunWorkflow reads run_workflow's arguments.
func readRunWorkflow(args json.RawMessage) (RunWorkflowInput, error) {
	var in RunWorkflowInput
	if len(args) > 0 && string(args) != "null" {
		dec := json.NewDecoder(strings.NewReader(string(args)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return in, switchboard.Invalid("arguments", "do not match the input schema: "+err.Error())
		}
	}
	if strings.TrimSpace(in.Name) == "" {
		return in, switchboard.Invalid("workflow_name", "is required")
	}
	return in, nil
}

// DryRun checks a workflow's run and says what it would do, without running anything.
func (t *Tools) DryRun(ctx context.Context, p switchboard.Principal, in RunWorkflowInput) (*providers.ContentResult, error) {
	plan, err := t.Workflows.DryRun(ctx, p, in.Name, in.Params())
	if err != nil {
		return nil, err
	}
	return providers.JSONContent(map[string]any{"status": "success", "message": "dry run: nothing was run", "plan": plan}, false)
}

func (t *Tools) listWorkflows() providers.Op {
	return &providers.Operation[ListWorkflowsInput, WorkflowList]{
		Name: ListWorkflows, Title: "List workflows",
		Description: "List the saved workflows of this tenant (each is also a tool run_flow__<name>, with run_flow_async__<name> and query_flow__<name>), and how many of your workflow runs are under way; include_running lists them too.",
		Hints:       providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in ListWorkflowsInput) (WorkflowList, error) {
			return t.ListWorkflows(ctx, c.Principal, in)
		},
	}
}

// ListWorkflows lists the tenant's saved workflows and, when asked, counts the
// principal's workflow runs under way.
func (t *Tools) ListWorkflows(ctx context.Context, p switchboard.Principal, in ListWorkflowsInput) (WorkflowList, error) {
	ws, err := t.Workflows.List(ctx, p, in.Category)
	if err != nil {
		return WorkflowList{}, err
	}
	out := WorkflowList{Workflows: make([]WorkflowItem, 0, len(ws))}
	for _, w := range ws {
		out.Workflows = append(out.Workflows, WorkflowItem{Name: w.Name, Description: w.Description, Category: w.Category,
			Tool: workflows.RunToolName(w.Name, 0), Version: w.Version, State: w.Lifecycle(), Path: WorkflowPath(w.Name), UpdatedAt: w.UpdatedAt})
	}
	for _, st := range []runs.State{runs.StateWorking, runs.StateInputRequired} {
		vs, _, err := t.Runs.List(ctx, p, runs.ListOptions{State: st, Kind: runs.KindWorkflow, Limit: runs.MaxListLimit})
		if err != nil {
			return WorkflowList{}, err
		}
		out.RunningCount += len(vs)
		if in.IncludeRunning {
			for _, v := range vs {
				out.Running = append(out.Running, RunningItem{WorkflowID: v.ID, Workflow: v.Workflow, Version: v.WorkflowVersion, State: string(v.State), CreatedAt: v.CreatedAt})
			}
		}
	}
	return out, nil
}

func (t *Tools) createWorkflow() providers.Op {
	return failing[CreateWorkflowInput, Created]{Operation: &providers.Operation[CreateWorkflowInput, Created]{
		Name: CreateWorkflow, Title: "Create a workflow",
		Description: "Save a workflow definition (name, description, parameters as a JSON Schema, steps with tool, connection, args with ${{ }} CEL expressions over params and steps, needs, if, foreach, on_error, outputs). It is checked first; each problem names its step and field.",
		Hints:       providers.Hints{ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in CreateWorkflowInput) (Created, error) {
			return t.CreateWorkflow(ctx, c.Principal, in)
		},
	}, failed: func(c Created) bool { return c.Status == "error" }}
}

// CreateWorkflow checks and saves a definition. A definition that is wrong answers
// status error with its problems (an internal failure is an error).
func (t *Tools) CreateWorkflow(ctx context.Context, p switchboard.Principal, in CreateWorkflowInput) (Created, error) {
	var source string
	switch d := in.Definition.(type) {
	case nil:
		return Created{}, switchboard.Invalid("definition", "is required")
	case string:
		source = d // YAML or JSON text
	default:
		raw, err := json.Marshal(d)
		if err != nil {
			return Created{}, switchboard.Invalid("definition", "must be an object or its YAML or JSON text")
		}
		source = string(raw)
	}
	def, err := workflows.Parse([]byte(source))
	if err == nil && in.Name != "" && def.Name == "" {
		def.Name = in.Name
	}
	if err == nil && in.Name != "" && def.Name != in.Name {
		err = switchboard.Invalid("name", "differs from the definition's name "+def.Name)
	}
	var w workflows.Workflow
	var created bool
	if err == nil {
		w, created, err = t.Workflows.Create(ctx, p, def, source, in.Overwrite)
	}
	if err != nil {
		if ps := workflows.ProblemsOf(err); ps != nil {
			err = ps.AsError()
		}
		if switchboard.CodeOf(err) == switchboard.CodeInternal {
			return Created{}, err
		}
		return Created{Status: "error", Message: ErrorText(err), Problems: workflows.ProblemsOf(err)}, nil
	}
	status := "updated"
	if created {
		status = "created"
	}
	return Created{Status: status, Path: WorkflowPath(w.Name), Name: w.Name, Tool: workflows.RunToolName(w.Name, 0), Version: w.Version}, nil
}

func (t *Tools) cancelWorkflow() providers.Op {
	return &providers.Operation[CancelWorkflowInput, Canceled]{
		Name: CancelWorkflow, Title: "Cancel a workflow run",
		Description: "Cancel one of your workflow runs: the steps in flight are stopped (their upstream requests may have taken effect) and no more start. The reason is recorded on the run. A run that had finished is left as it is, and the answer says how it finished.",
		Hints:       providers.Hints{Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in CancelWorkflowInput) (Canceled, error) {
			return t.CancelWorkflow(ctx, c.Principal, in)
		},
	}
}

// CancelWorkflow cancels one of the principal's workflow runs, recording the reason. A
// run that had finished answers so, as information (status error, its state and a
// message), not as a failure.
func (t *Tools) CancelWorkflow(ctx context.Context, p switchboard.Principal, in CancelWorkflowInput) (Canceled, error) {
	if strings.TrimSpace(in.ID) == "" {
		return Canceled{}, switchboard.Invalid("workflow_id", "is required")
	}
	v, err := t.Workflows.CancelBecause(ctx, p, in.ID, in.Reason)
	if switchboard.CodeOf(err) == switchboard.CodeConflict {
		st, serr := t.Workflows.Status(ctx, p, in.ID)
		if serr != nil {
			return Canceled{}, err
		}
		out := Canceled{Status: "error", StepsCompleted: st.StepsCompleted, State: string(st.Run.State),
			Message: fmt.Sprintf("workflow run %s had already finished (%s); nothing was cancelled", in.ID, st.Run.State)}
		return out, nil
	}
	if err != nil {
		return Canceled{}, err
	}
	out := Canceled{Status: "cancelled", State: string(v.State)}
	if st, err := t.Workflows.Status(ctx, p, v.ID); err == nil {
		out.StepsCompleted = st.StepsCompleted
	}
	return out, nil
}
