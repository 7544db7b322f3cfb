package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// Caller runs one tool call for a principal, with its ownership checks and audit
// row: the router.
type Caller interface {
	Execute(ctx context.Context, p switchboard.Principal, req router.Request) (any, error)
}

// MaxItems bounds the list a foreach step fans out over.
const MaxItems = 1000

// Engine runs workflow programs: the steps in the order their needs allow, up to the
// parallel limit at once, each step's input and output sealed in the store as it
// starts and ends, so a run that stops (its process died) resumes at its next step.
type Engine struct {
	store   *Store
	caller  Caller
	catalog Catalog
	log     *slog.Logger
	// after is the clock of retry backoffs (time.After unless a test sets it).
	after func(time.Duration) <-chan time.Time
	// waiting, when set, is called each time a call waits for the parallel bound.
	waiting func()
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	Store   *Store
	Caller  Caller  // the router
	Catalog Catalog // the router
	Logger  *slog.Logger
}

// NewEngine returns an Engine.
func NewEngine(o EngineOptions) *Engine {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Engine{store: o.Store, caller: o.Caller, catalog: o.Catalog, log: o.Logger, after: time.After}
}

// RunInput is what a workflow run executes: the definition as it was when the run
// started, its parameters and the run's own bounds. It is the run's sealed input.
type RunInput struct {
	Workflow      string          `json:"workflow"`
	Version       int64           `json:"version"`
	Definition    json.RawMessage `json:"definition"`
	Params        json.RawMessage `json:"params"`
	ParallelLimit int             `json:"parallel_limit,omitempty"`
	Timeout       Duration        `json:"timeout,omitempty"`
	// Depth is how many workflow runs this one is nested in (0: started by a caller,
	// 1: by a step of another workflow's run, …); see MaxDepth.
	Depth int `json:"depth,omitempty"`
	// Audited says the call that started the run has its own audit row
	// (StartOptions.Audited).
	Audited bool `json:"audited,omitempty"`
}

// MaxDepth bounds how deep workflow runs nest, a step of one starting another
// (directly, through run_workflow or switchboard_run_async): a workflow that calls
// itself stops there instead of starting runs without end.
const MaxDepth = 4

// depthKey carries, in the context of a step's call, the depth of the run it belongs to.
type depthKey struct{}

// depthFrom is the depth of the workflow run whose step made the call in ctx; -1 when
// no workflow's step did.
func depthFrom(ctx context.Context) int {
	if d, ok := ctx.Value(depthKey{}).(int); ok {
		return d
	}
	return -1
}

// timeout bounds the whole run: its own timeout, else the program's.
func (in RunInput) timeout(prog *Program) time.Duration {
	if in.Timeout > 0 {
		return time.Duration(in.Timeout)
	}
	return prog.Timeout()
}

// Result is a finished run's output.
type Result struct {
	// Status is success, or partial when steps with on_error: continue failed.
	Status         string         `json:"status"`
	Outputs        map[string]any `json:"outputs,omitempty"`
	StepsCompleted int            `json:"steps_completed"`
	StepsTotal     int            `json:"steps_total"`
	StepResults    []StepResult   `json:"step_results"`
}

// StepResult is how one step ended.
type StepResult struct {
	StepName string    `json:"step_name"`
	Status   StepState `json:"status"`
	Output   any       `json:"output,omitempty"`
	// Duration is how long the step took, in seconds.
	Duration float64 `json:"duration"`
	// StartedAt is when the step started.
	StartedAt    *time.Time `json:"started_at,omitempty"`
	ErrorMessage string     `json:"error_message,omitempty"`
}

// seconds is a duration in seconds, to the millisecond.
func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// Run is one execution of a program (or its resumption).
type Run struct {
	ID        string
	Principal switchboard.Principal
	Input     RunInput
	// Confirmed says the person confirmed the run (its steps' calls carry it).
	Confirmed bool
}

// Execute runs (or resumes) a workflow run to its end and returns its result; an
// error says why it failed (the step and the reason), or that it was canceled.
func (e *Engine) Execute(ctx context.Context, r Run) (*Result, error) {
	def, err := Parse(r.Input.Definition)
	if err != nil {
		return nil, fmt.Errorf("the run's definition: %w", err)
	}
	prog, err := Compile(def)
	if err != nil {
		return nil, err
	}
	bound, err := Check(ctx, prog, e.catalog, r.Principal)
	if err != nil {
		if ps := ProblemsOf(err); ps != nil {
			return nil, &switchboard.Error{Code: switchboard.CodeInvalid, Message: "the workflow cannot run as it stands now (a tool or connection changed since it was saved): " + ps.Error(), Err: ps}
		}
		return nil, err
	}
	var params map[string]any
	if len(r.Input.Params) > 0 {
		if err := json.Unmarshal(r.Input.Params, &params); err != nil {
			return nil, switchboard.Invalid("parameters", "must be a JSON object")
		}
	}
	if params == nil {
		params = map[string]any{}
	}
	limit := prog.ParallelLimit()
	if r.Input.ParallelLimit > 0 {
		limit = min(r.Input.ParallelLimit, MaxParallelLimit)
	}
	timeout := r.Input.timeout(prog)
	x := &execution{
		e: e, run: r, prog: prog, bound: bound, params: ints(params).(map[string]any),
		sem: make(chan struct{}, limit), done: map[string]*stepOutcome{},
	}
	return x.execute(ctx, timeout)
}

// stepOutcome is how a step ended, as expressions see it.
type stepOutcome struct {
	state  StepState
	output any
	errMsg string
	code   string
	start  *time.Time
	end    *time.Time
}

// execution is the state of one Execute.
type execution struct {
	e      *Engine
	run    Run
	prog   *Program
	bound  Bindings
	params map[string]any
	sem    chan struct{} // one token per tool call in flight

	mu    sync.Mutex
	done  map[string]*stepOutcome // steps ended, by name
	prior map[string]map[int]*StepRecord
}

// stepEnd is a step's goroutine reporting its end.
type stepEnd struct {
	step    *StepProgram
	outcome *stepOutcome
	abort   error // set when the workflow must stop
	// paused is set when the step waits for its person's answer: the steps that need
	// it do not start, the others go on, and the run pauses once they end.
	paused *runs.Pause
}

func (x *execution) execute(parent context.Context, timeout time.Duration) (*Result, error) {
	ctx, cancel := context.WithTimeoutCause(parent, timeout, errWorkflowTimeout)
	defer cancel()
	if err := x.loadPrior(ctx); err != nil {
		return nil, err
	}
	pending := map[string]*StepProgram{}
	for _, s := range x.prog.Steps {
		if o := x.resumed(s); o != nil {
			x.done[s.Name] = o
			continue
		}
		pending[s.Name] = s
	}
	ends := make(chan stepEnd)
	running := 0
	var failure error
	var paused *runs.Pause
	for {
		if failure == nil && ctx.Err() == nil {
			for _, s := range x.prog.Steps {
				if pending[s.Name] == nil || !x.ready(s) {
					continue
				}
				delete(pending, s.Name)
				running++
				go func(s *StepProgram) { ends <- x.runStep(ctx, s) }(s)
			}
		}
		if running == 0 {
			break
		}
		end := <-ends
		running--
		if end.paused != nil {
			if paused == nil {
				paused = end.paused
			}
			continue
		}
		x.mu.Lock()
		x.done[end.step.Name] = end.outcome
		x.mu.Unlock()
		if end.abort != nil && failure == nil {
			failure = end.abort
			cancel() // the steps in flight stop; no more start
		}
	}
	if failure != nil {
		return nil, failure
	}
	if err := parent.Err(); err != nil {
		return nil, &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the workflow was canceled; the steps in flight were stopped and no more were started", Err: err}
	}
	if context.Cause(ctx) == errWorkflowTimeout {
		return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("the workflow took longer than its timeout (%s) and was stopped", timeout)}
	}
	if paused != nil {
		return nil, paused // the executor parks the run; an answer resumes it here
	}
	if len(pending) > 0 {
		return nil, switchboard.Internal(fmt.Errorf("workflow run %s: %d steps never became ready", x.run.ID, len(pending)))
	}
	return x.result(ctx)
}

var errWorkflowTimeout = errors.New("the workflow's timeout passed")

// ready reports whether every step s needs has ended.
func (x *execution) ready(s *StepProgram) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, d := range s.needs {
		if x.done[d.Name] == nil {
			return false
		}
	}
	return true
}

// vars are the variables of an expression now: params, and the steps ended so far.
func (x *execution) vars() map[string]any {
	x.mu.Lock()
	defer x.mu.Unlock()
	steps := make(map[string]any, len(x.done))
	for name, o := range x.done {
		steps[name] = map[string]any{"output": o.output, "status": string(o.state), "error": o.errMsg}
	}
	return map[string]any{varParams: x.params, varSteps: steps}
}

// result evaluates the outputs and gathers the step results.
func (x *execution) result(ctx context.Context) (*Result, error) {
	res := &Result{Status: "success", StepsTotal: len(x.prog.Steps)}
	vars := x.vars()
	if x.prog.outputs != nil && len(x.prog.outputs.obj) > 0 {
		out, err := x.prog.outputs.eval(ctx, vars)
		if err != nil {
			return nil, switchboard.Invalid("outputs", err.Error())
		}
		res.Outputs, _ = out.(map[string]any)
	}
	if err := x.prog.checkOutputs(res.Outputs); err != nil {
		return nil, err
	}
	for _, s := range x.prog.Steps {
		o := x.done[s.Name]
		sr := StepResult{StepName: s.Name, Status: o.state, Output: o.output, ErrorMessage: o.errMsg, StartedAt: o.start}
		if o.start != nil && o.end != nil {
			sr.Duration = seconds(o.end.Sub(*o.start))
		}
		switch o.state {
		case StepCompleted, StepSkipped:
			res.StepsCompleted++
		case StepFailed:
			res.Status = "partial"
		}
		res.StepResults = append(res.StepResults, sr)
	}
	return res, nil
}

// runStep runs one step: its condition, then its one call or its items, and records
// its end.
func (x *execution) runStep(ctx context.Context, s *StepProgram) stepEnd {
	rec := &StepRecord{TenantID: x.run.Principal.TenantID, RunID: x.run.ID, Step: s.Name, Item: wholeStep,
		Tool: s.Tool, ConnectionID: x.bound[s.Name].ConnectionID}
	if p := x.prior[s.Name][wholeStep]; p != nil {
		rec.ID, rec.StartedAt, rec.Attempts = p.ID, p.StartedAt, p.Attempts
	}
	vars := x.vars()
	if s.cond != nil {
		v, err := s.cond.eval(ctx, vars)
		if err != nil {
			return x.endStep(ctx, s, rec, nil, switchboard.Invalid("if", err.Error()))
		}
		if b, _ := v.(bool); !b {
			rec.State = StepSkipped
			if err := x.e.store.finishStep(context.WithoutCancel(ctx), rec, nil); err != nil {
				return stepEnd{step: s, outcome: &stepOutcome{state: StepFailed, errMsg: err.Error()}, abort: err}
			}
			return stepEnd{step: s, outcome: &stepOutcome{state: StepSkipped, start: rec.StartedAt, end: rec.FinishedAt}}
		}
	}
	if s.Input != nil {
		out, err := x.ask(ctx, s, rec, vars)
		var pz *runs.Pause
		if errors.As(err, &pz) {
			return stepEnd{step: s, paused: pz}
		}
		return x.endStep(ctx, s, rec, out, err)
	}
	if s.each == nil {
		out, err := x.call(ctx, s, rec, vars)
		return x.endStep(ctx, s, rec, out, err)
	}
	list, err := s.each.eval(ctx, vars)
	if err != nil {
		return x.endStep(ctx, s, rec, nil, switchboard.Invalid("foreach", err.Error()))
	}
	items, ok := list.([]any)
	switch {
	case list == nil:
		items = nil
	case !ok:
		return x.endStep(ctx, s, rec, nil, switchboard.Invalid("foreach", fmt.Sprintf("${{ %s }} gave %T, not a list", s.each.src, list)))
	case len(items) > MaxItems:
		return x.endStep(ctx, s, rec, nil, switchboard.Invalid("foreach", fmt.Sprintf("${{ %s }} gave %d items; a step runs for at most %d", s.each.src, len(items), MaxItems)))
	}
	if err := x.e.store.startStep(context.WithoutCancel(ctx), rec, nil); err != nil {
		return x.endStep(ctx, s, rec, nil, err)
	}
	outs := make([]any, len(items))
	errs := make([]error, len(items))
	itemsCtx, stopItems := context.WithCancel(ctx)
	defer stopItems()
	var wg sync.WaitGroup
	for i, item := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			irec := &StepRecord{TenantID: rec.TenantID, RunID: rec.RunID, Step: s.Name, Item: i, Tool: rec.Tool, ConnectionID: rec.ConnectionID}
			if p := x.prior[s.Name][i]; p != nil {
				if p.State == StepCompleted {
					outs[i] = x.priorOutput(ctx, p)
					return
				}
				irec.ID, irec.StartedAt, irec.Attempts = p.ID, p.StartedAt, p.Attempts
			}
			ivars := map[string]any{varParams: vars[varParams], varSteps: vars[varSteps], varItem: item, varIndex: int64(i)}
			outs[i], errs[i] = x.call(itemsCtx, s, irec, ivars)
			if errs[i] != nil && s.OnError != OnErrorContinue {
				stopItems() // the step fails: its other items stop
			}
		}()
	}
	wg.Wait()
	return x.endStep(ctx, s, rec, outs, firstFailure(errs))
}

// firstFailure is the error of a foreach step: its first item's failure that is not
// the cancellation of its siblings the failure caused.
func firstFailure(errs []error) error {
	var canceled error
	for _, err := range errs {
		switch {
		case err == nil:
		case switchboard.CodeOf(err) == switchboard.CodeCanceled || errors.Is(err, context.Canceled):
			if canceled == nil {
				canceled = err
			}
		default:
			return err
		}
	}
	return canceled
}

// endStep records a step's end and says what it does to the workflow.
func (x *execution) endStep(ctx context.Context, s *StepProgram, rec *StepRecord, out any, err error) stepEnd {
	o := &stepOutcome{state: StepCompleted, output: out}
	var raw []byte
	if err == nil {
		var merr error
		if raw, merr = json.Marshal(out); merr != nil {
			err = switchboard.Internal(fmt.Errorf("encode output of step %s: %w", s.Name, merr))
		}
	}
	if err != nil {
		o.state, o.output, raw = StepFailed, nil, nil
		if ctx.Err() != nil {
			o.state = StepCanceled
		}
		o.code, o.errMsg = string(switchboard.CodeOf(err)), describe(err)
		rec.ErrorCode, rec.ErrorMessage = o.code, o.errMsg
	}
	rec.State = o.state
	if ferr := x.e.store.finishStep(context.WithoutCancel(ctx), rec, raw); ferr != nil {
		return stepEnd{step: s, outcome: o, abort: ferr}
	}
	o.start, o.end = rec.StartedAt, rec.FinishedAt
	end := stepEnd{step: s, outcome: o}
	if err != nil && (s.OnError != OnErrorContinue || o.state == StepCanceled) {
		if o.state == StepCanceled {
			end.abort = nil // the workflow's own end says why (canceled, timed out, or another step)
			return end
		}
		end.abort = &switchboard.Error{Code: switchboard.CodeOf(err), Message: fmt.Sprintf("step %s (%s) failed: %s", s.Name, s.Tool, o.errMsg), Err: err}
	}
	return end
}

// call runs one tool call of a step (or item), with its retries, recording each
// attempt's sealed input and the sealed output.
func (x *execution) call(ctx context.Context, s *StepProgram, rec *StepRecord, vars map[string]any) (any, error) {
	args, err := s.args.eval(ctx, vars)
	if err != nil {
		return nil, switchboard.Invalid("args", err.Error())
	}
	input, err := json.Marshal(args)
	if err != nil {
		return nil, switchboard.Invalid("args", err.Error())
	}
	bd := x.bound[s.Name]
	attempts := s.attempts()
	for n := 1; ; n++ {
		out, err := x.attempt(ctx, s, rec, bd, input)
		if err == nil || n >= attempts || !retryable(err) || ctx.Err() != nil {
			return out, err
		}
		wait := s.backoff(n)
		var se *switchboard.Error
		var ue *providers.UpstreamError
		if errors.As(err, &ue) && ue.RetryAfter > wait {
			wait = ue.RetryAfter
		} else if errors.As(err, &se) && se.RetryAfter > wait {
			wait = se.RetryAfter
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-x.e.after(wait):
		}
	}
}

// attempt is one try of a call, under the parallel bound and the step's timeout.
func (x *execution) attempt(ctx context.Context, s *StepProgram, rec *StepRecord, bd Bound, input []byte) (any, error) {
	select {
	case x.sem <- struct{}{}:
	default:
		if x.e.waiting != nil {
			x.e.waiting() // a test sees the bound hold this call back
		}
		select {
		case x.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer func() { <-x.sem }()
	store := context.WithoutCancel(ctx)
	rec.Attempts++
	if err := x.e.store.startStep(store, rec, input); err != nil {
		return nil, err
	}
	callCtx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, time.Duration(s.Timeout), errStepTimeout)
		defer cancel()
	}
	var ref router.AuditRef
	callCtx = router.WithAuditDetail(router.WithAuditRef(callCtx, &ref), x.auditDetail(rec))
	callCtx = context.WithValue(callCtx, depthKey{}, x.run.Input.Depth)
	out, err := x.e.caller.Execute(callCtx, x.run.Principal, router.Request{Tool: bd.Tool.Name, ConnectionID: bd.ConnectionID, Args: input, Confirmed: x.run.Confirmed})
	rec.AuditID = ref.ID
	if cr, ok := out.(*providers.ContentResult); ok && err == nil {
		// A tool answering in MCP content (a remote server's, another workflow's): a
		// failed result fails the step, with what it said; a good one's output is its
		// structured content where it has one.
		if cr.IsError {
			out, err = nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: clipText(cr.Text(), 2000)}
		} else if len(cr.StructuredContent) > 0 {
			out = cr.StructuredContent
		}
	}
	if err != nil {
		if context.Cause(callCtx) == errStepTimeout && ctx.Err() == nil {
			err = &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("the step took longer than its timeout (%s) and was stopped", time.Duration(s.Timeout)), Err: err}
		}
		if rec.Item != wholeStep {
			rec.State, rec.ErrorCode, rec.ErrorMessage = StepFailed, string(switchboard.CodeOf(err)), describe(err)
			if ctx.Err() != nil {
				rec.State = StepCanceled
			}
			if ferr := x.e.store.finishStep(store, rec, nil); ferr != nil {
				return nil, ferr
			}
		}
		return nil, err
	}
	raw, err := providers.MarshalOutput(out)
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("encode output of %s: %w", bd.Tool.Name, err))
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, switchboard.Internal(fmt.Errorf("decode output of %s: %w", bd.Tool.Name, err))
	}
	if rec.Item != wholeStep {
		rec.State = StepCompleted
		if err := x.e.store.finishStep(store, rec, raw); err != nil {
			return nil, err
		}
	}
	return ints(v), nil
}

var errStepTimeout = errors.New("the step's timeout passed")

func (x *execution) auditDetail(rec *StepRecord) string {
	d := fmt.Sprintf("workflow %s run %s step %s", x.run.Input.Workflow, x.run.ID, rec.Step)
	if rec.Item != wholeStep {
		d += fmt.Sprintf(" item %d", rec.Item)
	}
	return d
}

// retryable reports whether a failed call may succeed when tried again: not when the
// call itself is wrong or not allowed.
func retryable(err error) bool {
	switch switchboard.CodeOf(err) {
	case switchboard.CodeInvalid, switchboard.CodeForbidden, switchboard.CodeNotFound, switchboard.CodeUnauthorized,
		switchboard.CodeReconnect, switchboard.CodeConfirmationRequired, switchboard.CodeCanceled, switchboard.CodeOutcomeUnknown:
		return false
	}
	return true
}

// describe is the message of a step's error an agent or person can act on.
func describe(err error) string {
	var ue *providers.UpstreamError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	e := switchboard.AsError(err)
	switch {
	case e.Code == switchboard.CodeInternal:
		return "Switchboard failed to run this step (internal error); the operator has the details"
	case e.Field != "":
		return e.Field + ": " + e.Message
	default:
		return e.Message
	}
}
