package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// Router is what workflows need of the router: the tools a principal may call, their
// execution, and the confirm policy with its audit rows.
type Router interface {
	Caller
	Catalog
	Prepare(ctx context.Context, p switchboard.Principal, req router.Request) (router.Prepared, error)
	Policy(ctx context.Context, p switchboard.Principal) (router.Policy, error)
	RecordConfirmation(c router.Confirmation)
	Refused(p switchboard.Principal, req router.Request, err error)
	Ran(ctx context.Context, p switchboard.Principal, req router.Request, start time.Time, err error)
}

// ToolPrefix starts the tool name of every saved workflow: workflow_<name>.
const ToolPrefix = providers.WorkflowToolPrefix

// Hub is the runs executor's Runner and Gate: a run of a workflows provider's tool
// (a tenant's saved workflow, as the registry lists it) executes its workflow on the
// engine; every other run goes to the router. Wire the executor with it instead of the
// router.
type Hub struct {
	Router Router
	Engine *Engine
	// Registry is where the workflows provider is registered (Service.Spec): it says
	// which tools are workflows.
	Registry *providers.Registry
	// Service starts the run of a workflow's tool that a caller asks for as a run
	// (POST /api/runs, switchboard_run_async, an MCP task): the workflow's run, with the
	// call's arguments as its parameters. Without it such a run is refused.
	Service *Service
}

var (
	_ runs.Runner     = (*Hub)(nil)
	_ runs.Gate       = (*Hub)(nil)
	_ runs.Limiter    = (*Hub)(nil)
	_ runs.OwnStarter = (*Hub)(nil)
)

// Answer renders a workflow's run as its tool answers it: run_flow__<name>'s status and
// output, or Service.Answer for its other tools (failed, canceled and partial runs as
// failed results); handled is false for any other run.
func (h *Hub) Answer(ctx context.Context, p switchboard.Principal, v runs.View) (*providers.ContentResult, bool) {
	if h.Service == nil || v.Kind != runs.KindWorkflow {
		return nil, false
	}
	if t, err := h.workflow(ctx, p.TenantID, v.Tool); err == nil && t != nil {
		if op, ok := t.Op.(*flowOp); ok && op.kind == KindRun {
			res, err := h.Service.flowAnswer(ctx, p, v)
			return res, err == nil
		}
	}
	ans := h.Service.Answer(ctx, p, v)
	res, err := providers.JSONContent(ans, ans.IsError)
	return res, err == nil
}

// StartOwn starts the run of a saved workflow's tool as the workflow's own run, its
// arguments the workflow's parameters, and its time limit the workflow's; it leaves
// every other call (and the runs the Service starts) to the executor.
func (h *Hub) StartOwn(ctx context.Context, p switchboard.Principal, c runs.Call) (runs.View, bool, error) {
	if h.Service == nil || ctx.Value(serviceStart{}) != nil {
		return runs.View{}, false, nil
	}
	t, err := h.workflow(ctx, p.TenantID, c.Tool)
	if err != nil || t == nil {
		return runs.View{}, err != nil, err
	}
	if c.ConnectionID != "" {
		err := switchboard.Invalid("connection", t.Name+" runs on no connection; leave it out")
		h.Router.Refused(p, router.Request{Tool: c.Tool, ConnectionID: c.ConnectionID, Args: c.Args}, err)
		return runs.View{}, true, err
	}
	ref, _ := FlowOf(t)
	params, fc, err := SplitContext(c.Args)
	if err != nil {
		h.Router.Refused(p, router.Request{Tool: c.Tool, Args: c.Args}, err)
		return runs.View{}, true, err
	}
	v, err := h.Service.Start(ctx, p, ref.Name, params, StartOptions{Confirmed: c.Confirmed, Origin: c.Origin, Version: ref.Version, Context: fc.raw(), Tool: t.Name})
	return v, true, err
}

// workflowSpec is the provider the tools and runs of workflows are built under.
var workflowSpec = &providers.Spec{Name: Provider, Title: "Workflows"}

// runTool is what the executor knows of a workflow run: resumable, since the engine
// resumes at the next step and re-runs only steps that may run twice.
func runTool(t *providers.Tool) *providers.Tool {
	return &providers.Tool{Name: t.Name, Provider: t.Provider, Info: providers.Info{
		Name: t.Info.Name, Title: t.Info.Title, Hints: providers.Hints{Idempotent: true}}}
}

// workflow returns the tenant's tool of that name when it is a saved workflow's,
// else nil.
func (h *Hub) workflow(ctx context.Context, tenant switchboard.TenantID, name string) (*providers.Tool, error) {
	if h.Registry == nil {
		return nil, nil
	}
	if _, builtIn := h.Registry.Tool(name); builtIn {
		return nil, nil
	}
	t, err := h.Registry.TenantTool(ctx, tenant, name)
	if err != nil || !IsTool(t) {
		return nil, err
	}
	return t, nil
}

// Execute runs a workflow run on the engine, or a tool run through the router.
func (h *Hub) Execute(ctx context.Context, p switchboard.Principal, req router.Request) (any, error) {
	t, err := h.workflow(ctx, p.TenantID, req.Tool)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return h.Router.Execute(ctx, p, req)
	}
	id, ok := runs.IDFrom(ctx)
	if !ok {
		return nil, switchboard.Internal(fmt.Errorf("workflow %s executed outside a run", req.Tool))
	}
	var in RunInput
	if err := json.Unmarshal(req.Args, &in); err != nil {
		return nil, switchboard.Internal(fmt.Errorf("read the input of workflow run %s: %w", id, err))
	}
	if in.Audited {
		return h.Engine.Execute(ctx, Run{ID: id, Principal: p, Input: in, Confirmed: req.Confirmed})
	}
	// A run started as a run (POST /api/runs, switchboard_run_async, an MCP task, a
	// trigger) has no call of the workflow's tool of its own: its end is recorded as
	// that call, as any tool's run is.
	start := time.Now()
	res, err := h.Engine.Execute(ctx, Run{ID: id, Principal: p, Input: in, Confirmed: req.Confirmed})
	var pz *runs.Pause
	if !errors.As(err, &pz) { // a paused run is recorded when it ends
		h.Router.Ran(ctx, p, router.Request{Tool: req.Tool, Args: in.Params}, start, err)
	}
	return res, err
}

// Limit is a workflow run's time limit: the run's own timeout, else its definition's,
// else DefaultTimeout; a run of a tool that waits for a workflow's run (WorkflowWaiter)
// gets that limit and waiterGrace more. Other runs get the executor's.
func (h *Hub) Limit(ctx context.Context, p switchboard.Principal, req router.Request) time.Duration {
	t, err := h.workflow(ctx, p.TenantID, req.Tool)
	if err != nil {
		return 0
	}
	if t == nil {
		return h.waiterLimit(ctx, p, req)
	}
	var in RunInput
	if err := json.Unmarshal(req.Args, &in); err != nil {
		return 0 // Execute fails the run with the reason
	}
	def, err := Parse(in.Definition)
	if err != nil {
		return 0
	}
	return in.timeout(&Program{Def: def})
}

// WorkflowWaiter is a hub tool whose run waits for the run of the saved workflow its
// arguments name (run_workflow, StartOptions.ToEnd): that run's time limit is the
// workflow's, so that it does not end before the workflow does.
type WorkflowWaiter interface {
	// WaitsFor names the workflow a call's arguments run and the timeout they give it
	// (0: the workflow's own); ok is false for a call that runs none (a dry run).
	WaitsFor(args json.RawMessage) (name string, timeout time.Duration, ok bool)
}

// waiterGrace is how much longer than its workflow's run a run waiting for it may take:
// the workflow's own limit ends it first, and the waiting run answers how it ended.
const waiterGrace = time.Minute

// waiterLimit is the time limit of a WorkflowWaiter's run (0 for any other run).
func (h *Hub) waiterLimit(ctx context.Context, p switchboard.Principal, req router.Request) time.Duration {
	if h.Registry == nil || h.Service == nil {
		return 0
	}
	t, ok := h.Registry.Tool(req.Tool)
	if !ok {
		return 0
	}
	w, ok := t.Op.(WorkflowWaiter)
	if !ok {
		return 0
	}
	name, timeout, ok := w.WaitsFor(req.Args)
	if !ok {
		return 0
	}
	if timeout <= 0 {
		_, prog, err := h.Service.Program(ctx, p, name)
		if err != nil {
			return 0 // the run fails with the reason
		}
		timeout = prog.Timeout()
	}
	return timeout + waiterGrace
}

// serviceStart marks the context of a run the Service starts: its input is the saved
// workflow, checked for the principal.
type serviceStart struct{}

// Prepare passes workflow runs the Service starts (it checked them), refuses any
// other run of a workflow's tool (its input would be the caller's), and asks the
// router about the rest.
func (h *Hub) Prepare(ctx context.Context, p switchboard.Principal, req router.Request) (router.Prepared, error) {
	t, err := h.workflow(ctx, p.TenantID, req.Tool)
	if err != nil {
		return router.Prepared{}, err
	}
	if t != nil {
		if ctx.Value(serviceStart{}) == nil {
			// A run's input is the workflow's definition as saved: one a caller
			// writes is never run.
			err := switchboard.Invalid("tool", fmt.Sprintf("is a workflow: call the tool %s with its parameters, or start its run with POST /api/workflows/%s/runs", t.Name, t.Info.Name))
			h.Router.Refused(p, req, err)
			return router.Prepared{}, err
		}
		return router.Prepared{Tool: runTool(t)}, nil
	}
	return h.Router.Prepare(ctx, p, req)
}

// Policy is the router's.
func (h *Hub) Policy(ctx context.Context, p switchboard.Principal) (router.Policy, error) {
	return h.Router.Policy(ctx, p)
}

// RecordConfirmation is the router's.
func (h *Hub) RecordConfirmation(c router.Confirmation) { h.Router.RecordConfirmation(c) }

// Refused is the router's.
func (h *Hub) Refused(p switchboard.Principal, req router.Request, err error) {
	h.Router.Refused(p, req, err)
}

// Service is what the MCP tools and the REST API use: saving, listing and deleting
// workflows, and starting, following and canceling their runs.
type Service struct {
	Store  *Store
	Runs   *runs.Executor
	Router Router
	// Changed, when set, is called after a tenant's workflows changed (their tools
	// appear or disappear: the MCP adapter's Refresh).
	Changed func(tenant switchboard.TenantID)
	// User returns the principal of a user of the tenant (an error when the user is
	// gone): triggered runs run as the person who saved the workflow. Without it
	// triggers start nothing.
	User func(ctx context.Context, tenant switchboard.TenantID, userID string) (switchboard.Principal, error)
	// MinScheduleInterval is the shortest time a saved schedule may leave between two
	// firings (default DefaultMinScheduleInterval).
	MinScheduleInterval time.Duration
	// ToolWait bounds how long a call of a workflow's tool (or run_workflow) waits for
	// its run to end before it answers with the run's id to follow (default
	// DefaultToolWait).
	ToolWait time.Duration
	// ToolGrace is how long the tools of a deactivated or deleted workflow stay listed,
	// marked (default DefaultToolGrace).
	ToolGrace time.Duration

	cache toolCache // the workflows' tools (Spec)
}

// StartAs starts a run of a saved workflow without a caller (a trigger): as the user
// who saved it last, who must still be one of the tenant's.
func (s *Service) StartAs(ctx context.Context, w Workflow, params json.RawMessage) error {
	if s.User == nil {
		return switchboard.Errorf(switchboard.CodeUnavailable, "triggers are not wired on this server")
	}
	userID, ok := strings.CutPrefix(w.UpdatedBy, "user:")
	if !ok {
		return switchboard.Errorf(switchboard.CodeForbidden, "workflow %s was last saved by %s, not a person; triggers run only as a person", w.Name, w.UpdatedBy)
	}
	p, err := s.User(ctx, w.TenantID, userID)
	if err != nil {
		return fmt.Errorf("the person who saved workflow %s: %w", w.Name, err)
	}
	_, err = s.Start(ctx, p, w.Name, params, StartOptions{})
	return err
}

// Create validates a definition against the principal's tools and saves it; with
// overwrite it replaces the workflow of that name, which only its creator or an admin
// may do. created says whether it is new. Only a person saves workflows: an agent's key
// never does, whatever its creator's role.
func (s *Service) Create(ctx context.Context, p switchboard.Principal, def *Definition, source string, overwrite bool) (Workflow, bool, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Workflow{}, false, switchboard.AgentForbidden("save workflows")
	}
	prog, _, err := CompileAndCheck(ctx, def, s.Router, p)
	if err != nil {
		return Workflow{}, false, asInvalid(err)
	}
	if len(def.Triggers) > 0 && p.Kind != switchboard.PrincipalUser {
		return Workflow{}, false, Problems{{Field: "triggers", Message: "only a person may save a workflow with triggers: its triggered runs run as the one who saved it"}}.AsError()
	}
	if err := checkSchedules(def, s.MinScheduleInterval); err != nil {
		return Workflow{}, false, err
	}
	if overwrite {
		if old, err := s.Store.Get(ctx, p.TenantID, def.Name); err == nil && old.CreatedBy != p.ID() && !p.IsAdmin() {
			return Workflow{}, false, switchboard.Errorf(switchboard.CodeForbidden, "workflow %s was created by someone else; only they or an admin may replace it", def.Name)
		}
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return Workflow{}, false, switchboard.Internal(err)
	}
	if strings.TrimSpace(source) == "" {
		source = string(raw)
	}
	w := Workflow{Name: def.Name, Description: def.Description, Category: def.Category, Definition: string(raw), Source: source, CreatedBy: p.ID(),
		Scheduled: len(prog.Schedules()) > 0}
	created, err := s.Store.Save(ctx, p.TenantID, &w, overwrite)
	if err != nil {
		return Workflow{}, false, err
	}
	if s.Changed != nil {
		s.Changed(p.TenantID)
	}
	return w, created, nil
}

// Delete removes a workflow; only its creator or an admin may, never an agent's key.
func (s *Service) Delete(ctx context.Context, p switchboard.Principal, name string) error {
	if p.Kind != switchboard.PrincipalUser {
		return switchboard.AgentForbidden("delete workflows")
	}
	w, err := s.Store.Get(ctx, p.TenantID, name)
	if err != nil {
		return err
	}
	if w.CreatedBy != p.ID() && !p.IsAdmin() {
		return switchboard.Errorf(switchboard.CodeForbidden, "workflow %s was created by someone else; only they or an admin may delete it", name)
	}
	if err := s.Store.Delete(ctx, p.TenantID, name); err != nil {
		return err
	}
	if s.Changed != nil {
		s.Changed(p.TenantID)
	}
	return nil
}

// List returns the tenant's workflows (of the category, when one is given).
func (s *Service) List(ctx context.Context, p switchboard.Principal, category string) ([]Workflow, error) {
	return s.Store.List(ctx, p.TenantID, category)
}

// Get returns one of the tenant's saved workflows.
func (s *Service) Get(ctx context.Context, p switchboard.Principal, name string) (Workflow, error) {
	return s.Store.Get(ctx, p.TenantID, name)
}

// RunsOf lists the principal's own runs of a workflow, newest first, and the cursor of
// the next page.
func (s *Service) RunsOf(ctx context.Context, p switchboard.Principal, name, cursor string) ([]runs.View, string, error) {
	if _, err := s.Store.Get(ctx, p.TenantID, name); err != nil {
		return nil, "", err
	}
	return s.Runs.List(ctx, p, runs.ListOptions{Workflow: name, Cursor: cursor})
}

// LastRun is the principal's newest run of a workflow (nil when there is none).
func (s *Service) LastRun(ctx context.Context, p switchboard.Principal, name string) (*runs.View, error) {
	list, _, err := s.Runs.List(ctx, p, runs.ListOptions{Workflow: name, Limit: 1})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// DryRunDefinition checks an unsaved definition and parameters for the principal, as
// a save and a run would, without saving or running anything.
func (s *Service) DryRunDefinition(ctx context.Context, p switchboard.Principal, def *Definition, params json.RawMessage) (Plan, error) {
	if _, _, err := CompileAndCheck(ctx, def, s.Router, p); err != nil {
		return Plan{}, asInvalid(err)
	}
	prog, err := Compile(def)
	if err != nil {
		return Plan{}, asInvalid(err)
	}
	return s.plan(ctx, p, prog, params)
}

// Program returns a saved workflow compiled.
func (s *Service) Program(ctx context.Context, p switchboard.Principal, name string) (Workflow, *Program, error) {
	w, err := s.Store.Get(ctx, p.TenantID, name)
	if err != nil {
		return Workflow{}, nil, err
	}
	def, err := Parse([]byte(w.Definition))
	if err != nil {
		return Workflow{}, nil, asInvalid(err)
	}
	prog, err := Compile(def)
	if err != nil {
		return Workflow{}, nil, asInvalid(err)
	}
	return w, prog, nil
}

// Runnable reports whether p may run the saved workflow: it is one of the tenant's
// (else not found), and every step's tool exists and may be used by p, as a save
// checks (else invalid, naming the step and field). Agents check the workflows they
// select with it.
func (s *Service) Runnable(ctx context.Context, p switchboard.Principal, name string) error {
	_, prog, err := s.Program(ctx, p, name)
	if err != nil {
		return err
	}
	if _, err := Check(ctx, prog, s.Router, p); err != nil {
		return asInvalid(err)
	}
	return nil
}

// StartOptions override a definition's bounds for one run.
type StartOptions struct {
	ParallelLimit int
	Timeout       time.Duration
	// Confirmed says the person confirmed the run already (the MCP client's form,
	// asked with ConfirmMessage); set only by the code that took the confirmation.
	Confirmed bool
	// Origin is where the run was asked for (default runs.OriginAsync).
	Origin runs.Origin
	// Audited says the call that starts the run has an audit row of its own (a call of
	// the workflow's tool, or run_workflow, through the router); else the run's end is
	// recorded as the call of the workflow's tool.
	Audited bool
	// Context is the caller's _context (Context), recorded on the run.
	Context json.RawMessage
	// Version, when set, is the version the caller's tool runs: a run of another is
	// refused.
	Version int64
	// Tool is the workflow's tool the caller named, which the run is recorded under
	// (default its run_flow__<name>).
	Tool string
	// ToEnd says the call that starts the run is itself a run (an MCP task,
	// switchboard_run_async), which no request waits on: RunAndAnswer waits for the
	// run's end rather than the Service's ToolWait, and puts the questions the run's
	// steps ask to the call's client, when it has one (an MCP task's). The workflow's
	// run then takes no run slot of its own, as the run waiting for it holds one.
	ToEnd bool
}

// Plan is what a run of a workflow will do, as a dry run answers it.
type Plan struct {
	Workflow string     `json:"workflow"`
	Steps    []PlanStep `json:"steps"`
	// Changes are the steps that change data (writes and deletes).
	Changes []string `json:"changes,omitempty"`
	// NeedsConfirm says the caller's confirm policy will ask a person first.
	NeedsConfirm bool `json:"needs_confirm"`
}

// PlanStep is one step of a plan.
type PlanStep struct {
	Name         string `json:"name"`
	Tool         string `json:"tool"`
	ConnectionID string `json:"connection_id"`
	// Account is the connection's label, as the caller knows the account.
	Account     string   `json:"account,omitempty"`
	Needs       []string `json:"needs,omitempty"`
	ReadOnly    bool     `json:"read_only"`
	Destructive bool     `json:"destructive"`
}

// DryRun checks a saved workflow and parameters for the principal without running
// anything, and says what a run would do.
func (s *Service) DryRun(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage) (Plan, error) {
	_, prog, err := s.Program(ctx, p, name)
	if err != nil {
		return Plan{}, err
	}
	return s.plan(ctx, p, prog, params)
}

func (s *Service) plan(ctx context.Context, p switchboard.Principal, prog *Program, params json.RawMessage) (Plan, error) {
	bound, err := Check(ctx, prog, s.Router, p)
	if err != nil {
		return Plan{}, asInvalid(err)
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := prog.ValidateParams(params); err != nil {
		e := switchboard.AsError(err)
		return Plan{}, switchboard.Invalid("parameters."+e.Field, e.Message)
	}
	pol, err := s.Router.Policy(ctx, p)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Workflow: prog.Def.Name}
	for _, st := range prog.Steps {
		bd := bound[st.Name]
		h := bd.Tool.Info.Hints
		plan.Steps = append(plan.Steps, PlanStep{Name: st.Name, Tool: bd.Tool.Name, ConnectionID: bd.ConnectionID, Account: bd.Account, Needs: st.Needs, ReadOnly: h.ReadOnly, Destructive: h.Destructive})
		if !h.ReadOnly {
			what := fmt.Sprintf("%s: %s (%s)", st.Name, bd.Tool.Info.Title, bd.Tool.Name)
			if bd.Account != "" {
				what += " on " + bd.Account // the account as the person named it
			}
			if h.Destructive {
				what += ", may delete or overwrite what cannot be restored"
			}
			if st.each != nil {
				what += ", once per item of its list"
			}
			plan.Changes = append(plan.Changes, what)
		}
		if pol.Covers(bd.Tool) {
			plan.NeedsConfirm = true
		}
	}
	return plan, nil
}

// Start starts a run of a saved workflow for the principal. It answers at once, with
// the run working, or input_required when the principal's confirm policy covers one
// of its steps: the person is then asked once, with the list of what it will change.
func (s *Service) Start(ctx context.Context, p switchboard.Principal, name string, params json.RawMessage, o StartOptions) (runs.View, error) {
	w, prog, err := s.Program(ctx, p, name)
	if err != nil {
		return runs.View{}, err
	}
	if w.Deactivated {
		return runs.View{}, switchboard.Errorf(switchboard.CodeConflict, "workflow %s is deactivated; a person activates it again before it runs", name)
	}
	version := o.Version
	if version == 0 && environment(o.Context) == "live" {
		version = w.LiveVersion
	}
	if version > 0 && version != w.Version {
		// An earlier kept version: its definition as it was saved.
		kept, err := s.Store.Version(ctx, p.TenantID, w, version)
		if err != nil {
			return runs.View{}, err
		}
		def, err := Parse([]byte(kept.Definition))
		if err != nil {
			return runs.View{}, asInvalid(err)
		}
		if prog, err = Compile(def); err != nil {
			return runs.View{}, asInvalid(err)
		}
		w.Definition, w.Version = kept.Definition, version
	}
	plan, err := s.plan(ctx, p, prog, params)
	if err != nil {
		return runs.View{}, err
	}
	if o.ParallelLimit < 0 || o.ParallelLimit > MaxParallelLimit {
		return runs.View{}, switchboard.Invalid("parallel_limit", fmt.Sprintf("must be between 1 and %d", MaxParallelLimit))
	}
	if o.Timeout < 0 || o.Timeout > 24*time.Hour {
		return runs.View{}, switchboard.Invalid("timeout", "must be between 1 s and 24 h")
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	depth := depthFrom(ctx) + 1
	if depth > MaxDepth {
		return runs.View{}, switchboard.Invalid("tool", fmt.Sprintf("would start workflow %s %d runs deep: a workflow's step may start another workflow, but runs nest at most %d deep", w.Name, depth+1, MaxDepth+1))
	}
	input, err := json.Marshal(RunInput{Workflow: w.Name, Version: w.Version, Definition: json.RawMessage(w.Definition), Params: params,
		ParallelLimit: o.ParallelLimit, Timeout: Duration(o.Timeout), Depth: depth, Audited: o.Audited})
	if err != nil {
		return runs.View{}, switchboard.Internal(err)
	}
	origin := o.Origin
	if origin == "" {
		origin = runs.OriginAsync
	}
	tool := o.Tool
	if tool == "" {
		tool = RunToolName(w.Name, 0)
	}
	// A run started by a step of another run, or by a run that waits for it to end
	// (ToEnd), takes none of the tenant's run slots: the run waiting holds one.
	call := runs.Call{Tool: tool, Args: input, Origin: origin, Confirmed: o.Confirmed, Nested: depth > 0 || o.ToEnd,
		Kind: runs.KindWorkflow, Workflow: w.Name, WorkflowVersion: w.Version, Context: o.Context}
	ctx = context.WithValue(ctx, serviceStart{}, true) // the Hub's Prepare passes only these
	if plan.NeedsConfirm && !o.Confirmed {
		return s.Runs.StartConfirm(ctx, p, call, ConfirmMessage(w.Name, plan))
	}
	return s.Runs.Start(ctx, p, call)
}

// environment is the environment_id of a run's recorded _context ("" when none).
func environment(raw json.RawMessage) string {
	var c Context
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil {
		return ""
	}
	return c.EnvironmentID
}

// ConfirmMessage asks once for the whole run, listing what it will change.
func ConfirmMessage(name string, plan Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Confirm: workflow %s will run %d steps as you.", name, len(plan.Steps))
	if len(plan.Changes) > 0 {
		b.WriteString(" It will change: ")
		b.WriteString(strings.Join(plan.Changes, "; "))
		b.WriteString(".")
	}
	return b.String()
}

// Cancel cancels one of the principal's workflow runs: the steps in flight stop and
// no more start.
func (s *Service) Cancel(ctx context.Context, p switchboard.Principal, runID string) (runs.View, error) {
	return s.CancelBecause(ctx, p, runID, "")
}

// CancelBecause cancels as Cancel does, recording the caller's reason on the run.
func (s *Service) CancelBecause(ctx context.Context, p switchboard.Principal, runID, reason string) (runs.View, error) {
	if _, err := s.workflowRun(ctx, p, runID); err != nil {
		return runs.View{}, err
	}
	return s.Runs.CancelBecause(ctx, p, runID, reason)
}

// RunStatus is a workflow run with its steps.
type RunStatus struct {
	Run runs.View `json:"run"`
	// Workflow names the workflow the run is of.
	Workflow string       `json:"workflow"`
	Steps    []StepStatus `json:"step_results"`
	// StepsTotal counts the workflow's steps; StepsCompleted those that ended
	// completed or skipped.
	StepsTotal     int `json:"steps_total"`
	StepsCompleted int `json:"steps_completed"`
}

// StepStatus is a step of a run as the run page shows it: how it ended, and the tool,
// connection, attempts and input it ran with (the arguments the tool got; never a
// credential, which no step holds).
type StepStatus struct {
	StepResult
	Tool         string     `json:"tool"`
	ConnectionID string     `json:"connection_id,omitempty"`
	Attempts     int        `json:"attempts"`
	Input        any        `json:"input,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
}

// Status returns one of the principal's workflow runs with each step's state, timing
// and output.
func (s *Service) Status(ctx context.Context, p switchboard.Principal, runID string) (RunStatus, error) {
	v, err := s.workflowRun(ctx, p, runID)
	if err != nil {
		return RunStatus{}, err
	}
	recs, err := s.Store.Steps(ctx, p.TenantID, runID)
	if err != nil {
		return RunStatus{}, err
	}
	st := RunStatus{Run: v, Workflow: v.Workflow}
	if _, prog, err := s.Program(ctx, p, v.Workflow); err == nil {
		st.StepsTotal = len(prog.Steps)
	}
	for i := range recs {
		r := &recs[i]
		if r.Item != wholeStep {
			continue
		}
		sr := StepStatus{StepResult: StepResult{StepName: r.Step, Status: r.State, StartedAt: r.StartedAt, ErrorMessage: r.ErrorMessage},
			Tool: r.Tool, ConnectionID: r.ConnectionID, Attempts: r.Attempts, FinishedAt: r.FinishedAt}
		if r.StartedAt != nil && r.FinishedAt != nil {
			sr.Duration = seconds(r.FinishedAt.Sub(*r.StartedAt))
		}
		if raw, err := s.Store.Input(ctx, r); err == nil && raw != nil {
			sr.Input = json.RawMessage(raw)
		}
		if raw, err := s.Store.Output(ctx, r); err == nil && raw != nil {
			sr.Output = json.RawMessage(raw)
		}
		if r.State == StepCompleted || r.State == StepSkipped {
			st.StepsCompleted++
		}
		st.Steps = append(st.Steps, sr)
	}
	return st, nil
}

// EndedInError reports whether v is a workflow run that ended failed, canceled or
// partial (a step with on_error: continue failed): what its callers get as an error.
func EndedInError(v runs.View) bool {
	if v.Kind != runs.KindWorkflow {
		return false
	}
	switch v.State {
	case runs.StateFailed, runs.StateCanceled:
		return true
	case runs.StateCompleted:
		var res Result
		return json.Unmarshal(v.Output, &res) == nil && res.Status != "success"
	default:
		return false
	}
}

// StepsEnded counts the steps of one of the principal's workflow runs that ended
// (completed, skipped or failed), for its progress.
func (s *Service) StepsEnded(ctx context.Context, p switchboard.Principal, runID string) (int, error) {
	if _, err := s.workflowRun(ctx, p, runID); err != nil {
		return 0, err
	}
	recs, err := s.Store.Steps(ctx, p.TenantID, runID)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range recs {
		if st := recs[i].State; recs[i].Item == wholeStep && (st == StepCompleted || st == StepSkipped || st == StepFailed) {
			n++
		}
	}
	return n, nil
}

// workflowRun reads one of the principal's runs that is a workflow's.
func (s *Service) workflowRun(ctx context.Context, p switchboard.Principal, runID string) (runs.View, error) {
	v, err := s.Runs.Get(ctx, p, runID)
	if err != nil {
		return runs.View{}, err
	}
	if v.Kind != runs.KindWorkflow {
		return runs.View{}, switchboard.NotFound("workflow run")
	}
	return v, nil
}

// asInvalid turns Problems into the hub's invalid error, keeping other errors.
func asInvalid(err error) error {
	if ps := ProblemsOf(err); ps != nil {
		return ps.AsError()
	}
	return err
}
