package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// Runner runs one tool call for a principal: the router.
type Runner interface {
	Execute(ctx context.Context, p switchboard.Principal, req router.Request) (any, error)
}

// Limiter is a Runner whose calls of some tools carry their own time limit (a
// workflow's timeout); Limit answers zero where the executor's RunTimeout applies.
type Limiter interface {
	Limit(ctx context.Context, p switchboard.Principal, req router.Request) time.Duration
}

// Gate is what the executor asks the router before a run exists: whether the call
// may run at all (and an audit row when not), and whether the principal's confirm
// policy wants a person's confirmation first; and where it records the steps of a
// confirmation. The router is one; without a Gate a run's call is only validated here
// (the router still refuses, at execution, a call that needed a confirmation).
type Gate interface {
	Prepare(ctx context.Context, p switchboard.Principal, req router.Request) (router.Prepared, error)
	Policy(ctx context.Context, p switchboard.Principal) (router.Policy, error)
	RecordConfirmation(c router.Confirmation)
	// Refused records the audit row of a call that ended without reaching Execute (a
	// run canceled before it executed).
	Refused(p switchboard.Principal, req router.Request, err error)
}

// OwnStarter is a Gate that starts some runs itself, in their own form: a saved
// workflow's tool asked for as a run is the workflow's run. Start asks it first;
// handled false leaves the call to the executor.
type OwnStarter interface {
	StartOwn(ctx context.Context, p switchboard.Principal, c Call) (v View, handled bool, err error)
}

// Options configure an Executor.
type Options struct {
	Store  *Store
	Runner Runner
	// Gate checks calls before their runs are stored; nil is Runner when it is one.
	Gate Gate
	// ApprovalURL is the page where a person approves an input_required run, for the
	// messages that send them there; nil leaves the page out.
	ApprovalURL func(runID string) string
	// Connections lets the approval page check that a person may use a run's
	// connection; without it nobody approves on a page.
	Connections Connections
	Registry    *providers.Registry // the tools' hints: which runs may run again after a crash
	Logger      *slog.Logger
	// MaxPerTenant bounds the runs of one tenant that execute at once (default 4);
	// more wait their turn, in the working state.
	MaxPerTenant int
	// MaxQueuedPerTenant bounds the runs of one tenant that this process holds, waiting
	// or executing (default 64); more are refused as rate limited.
	MaxQueuedPerTenant int
	// RunTimeout bounds one execution (default 5 minutes), unless the Runner is a
	// Limiter that gives the call a limit of its own.
	RunTimeout time.Duration
	// ConfirmTimeout is how long an input_required run waits for its confirmation
	// (default 15 minutes); then it fails.
	ConfirmTimeout time.Duration
	// Lease is how long a process holds a run without renewing it (default 30 s): a
	// run whose lease ran out is recovered by any process.
	Lease time.Duration
	// Node names this process in leases (default a random id).
	Node string
	// Retention is how long an ended run is kept, with its sealed output (default 30
	// days); older ones are deleted.
	Retention time.Duration
	// Describe renders a failed call's error as the message an agent reads; the
	// default uses the error's own message.
	Describe func(error) string
	// Feed carries cancellations to the node executing the run, and every change of a
	// run's state to every node (StateChanged, OnStateChange); nil stops only runs this
	// process holds, and tells nobody of changes.
	Feed events.Bus
	// Slots, when set, bounds a tenant's executing runs across every node that shares
	// it (limits.Redis): MaxPerTenant is then the fleet's bound, not each node's. Nil
	// bounds them in this process only (one node).
	Slots limits.Slots
}

// Executor starts, runs, cancels and recovers runs. It is safe for concurrent use.
type Executor struct {
	o     Options
	store *Store
	log   *slog.Logger

	mu      sync.Mutex
	tenants map[switchboard.TenantID]*tenantSlots
	local   map[string]*localRun // runs this process holds, waiting or executing
	closed  bool
	wg      sync.WaitGroup
	stop    chan struct{}
}

// tenantSlots bounds one tenant's runs in this process.
type tenantSlots struct {
	sem  chan struct{} // one token per executing run
	held int           // runs held, waiting or executing
}

// localRun is a run this process holds.
type localRun struct {
	tenant switchboard.TenantID
	cancel context.CancelFunc
	done   chan struct{} // closed when the run reaches a final state here
	// caller is the client the run's call may turn to while it executes here (Call.Caller).
	caller providers.Caller
}

// NewExecutor returns an Executor; call Run to start its background work.
func NewExecutor(o Options) *Executor {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxPerTenant <= 0 {
		o.MaxPerTenant = 4
	}
	if o.MaxQueuedPerTenant <= 0 {
		o.MaxQueuedPerTenant = 64
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 5 * time.Minute
	}
	if o.ConfirmTimeout <= 0 {
		o.ConfirmTimeout = 15 * time.Minute
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.Node == "" {
		o.Node = switchboard.NewID("node")
	}
	if o.Retention <= 0 {
		o.Retention = 30 * 24 * time.Hour
	}
	if o.Describe == nil {
		o.Describe = describe
	}
	if o.Gate == nil {
		o.Gate, _ = o.Runner.(Gate)
	}
	e := &Executor{
		o: o, store: o.Store, log: o.Logger,
		tenants: map[switchboard.TenantID]*tenantSlots{},
		local:   map[string]*localRun{},
		stop:    make(chan struct{}),
	}
	if o.Feed != nil {
		e.publishStates(o.Feed)
		o.Feed.Subscribe(func(ev events.Event) {
			if ev.Kind == events.RunCanceled {
				e.stopLocalOf(ev.Tenant, ev.ID)
			}
		})
	}
	return e
}

// Call is what a run runs: a tool on one connection with its arguments (already
// resolved from the MCP call: the connection argument is removed).
type Call struct {
	Tool         string
	ConnectionID string
	Args         json.RawMessage
	Origin       Origin
	// Confirmed says a person confirmed the call already (the MCP client's form); set
	// only by the code that took the confirmation.
	Confirmed bool
	// Nested says the call is made by a step of another run (a workflow's step starting
	// another workflow), which holds one of its tenant's run slots while it waits: the
	// nested run takes none of its own, else nested runs could wait for slots their
	// parents hold. They still count against the tenant's queued runs.
	Nested bool
	// Kind, Workflow and WorkflowVersion say what the run executes when it is not a
	// plain tool call (a saved workflow's run); they are recorded on the run.
	Kind            Kind
	Workflow        string
	WorkflowVersion int64
	// Context is the caller's context of the run (JSON), recorded on the run.
	Context json.RawMessage
	// Caller is the client the call may turn to while it executes (an MCP task's: the
	// requests it asks become the task's input requests). It is kept in memory, for
	// the execution Start begins: a run that waits for its confirmation first, or one
	// recovered by another process, executes without one.
	Caller providers.Caller
}

// Start stores a new run of the call for the principal and starts it; it answers at
// once, with the run in the working state, or input_required when the principal's
// confirm policy wants a person's confirmation first (see Answer and Approve). The
// call is checked first (the tool, its arguments, the connection), so a bad call is
// refused here rather than failing later.
func (e *Executor) Start(ctx context.Context, p switchboard.Principal, c Call) (View, error) {
	if s, ok := e.o.Gate.(OwnStarter); ok {
		if v, handled, err := s.StartOwn(ctx, p, c); handled {
			return v, err
		}
	}
	r, input, prep, err := e.newRun(ctx, p, c)
	if err != nil {
		return View{}, err
	}
	if prep.NeedsConfirm && !c.Confirmed {
		account := prep.Account()
		if account == "" {
			account = c.ConnectionID
		}
		return e.startConfirm(ctx, p, r, input, Summary(prep.Tool, account))
	}
	if c.Confirmed {
		r.ElicitationAction = "accept"
	}
	if err := e.hold(r.ID, p.TenantID); err != nil {
		return View{}, err
	}
	if c.Caller != nil {
		e.mu.Lock()
		e.local[r.ID].caller = c.Caller
		e.mu.Unlock()
	}
	r.State = StateWorking
	r.LeaseOwner = e.o.Node
	until := e.store.now().Add(e.o.Lease)
	r.LeaseUntil = &until
	if err := e.store.create(ctx, r, input); err != nil {
		e.release(r.ID, p.TenantID)
		return View{}, err
	}
	e.dispatch(*r, c.Nested)
	return r.view(nil), nil
}

// StartConfirm stores a new run of the call that waits, input_required, for a
// person's confirmation (see Answer); message says what will happen.
func (e *Executor) StartConfirm(ctx context.Context, p switchboard.Principal, c Call, message string) (View, error) {
	r, input, _, err := e.newRun(ctx, p, c)
	if err != nil {
		return View{}, err
	}
	return e.startConfirm(ctx, p, r, input, message)
}

// startConfirm stores a checked run that waits for its confirmation, and records
// that it was asked.
func (e *Executor) startConfirm(ctx context.Context, p switchboard.Principal, r *Run, input []byte, message string) (View, error) {
	r.State = StateInputRequired
	r.ElicitationMessage = clip(message)
	expires := e.store.now().Add(e.o.ConfirmTimeout)
	r.ElicitationExpiresAt = &expires
	if err := e.store.create(ctx, r, input); err != nil {
		return View{}, err
	}
	e.confirmation(router.KindConfirmationAsked, p, r, "run "+r.ID+" waits for it")
	return e.linked(r.view(nil)), nil
}

// confirmation records one step of a run's confirmation.
func (e *Executor) confirmation(kind audit.Kind, who switchboard.Principal, r *Run, detail string) {
	if e.o.Gate == nil {
		return
	}
	e.o.Gate.RecordConfirmation(router.Confirmation{Kind: kind, Principal: who, Tool: r.Tool, ConnectionID: r.ConnectionID, Detail: detail})
}

// Summary says what a confirmed call of the tool will do, for the person asked.
func Summary(tool *providers.Tool, account string) string {
	what := fmt.Sprintf("Confirm: %s (%s) will run as %s account %q.", tool.Info.Title, tool.Name, tool.Provider.Title, account)
	if tool.Info.Hints.Destructive {
		what += " It may delete or overwrite what cannot be restored."
	} else if !tool.Info.Hints.ReadOnly {
		what += " It changes data at " + tool.Provider.Title + "."
	}
	return what
}

// newRun checks the call (through the Gate, which audits a refusal) and builds its row.
func (e *Executor) newRun(ctx context.Context, p switchboard.Principal, c Call) (*Run, []byte, router.Prepared, error) {
	if p.TenantID == "" {
		return nil, nil, router.Prepared{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "no principal"}
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var prep router.Prepared
	if e.o.Gate != nil {
		var err error
		if prep, err = e.o.Gate.Prepare(ctx, p, router.Request{Tool: c.Tool, ConnectionID: c.ConnectionID, Args: args}); err != nil {
			return nil, nil, router.Prepared{}, err
		}
	} else {
		// Without the router, only the registry's tools are known.
		tool, ok := e.o.Registry.Tool(c.Tool)
		if !ok {
			return nil, nil, router.Prepared{}, switchboard.Invalid("tool", fmt.Sprintf("unknown tool %q", c.Tool))
		}
		if err := tool.Validate(args); err != nil {
			return nil, nil, router.Prepared{}, err
		}
		if c.ConnectionID == "" {
			return nil, nil, router.Prepared{}, switchboard.Invalid("connection", "is required")
		}
		prep.Tool = tool
	}
	if c.Origin == "" {
		c.Origin = OriginAsync
	}
	return &Run{
		ID: switchboard.NewID("run"), TenantID: p.TenantID, Principal: p.ID(), PrincipalKind: p.Kind,
		UserID: p.UserID, AgentID: p.AgentID, KeyID: p.KeyID, Role: p.Role,
		Tool: c.Tool, ConnectionID: c.ConnectionID, Origin: c.Origin,
		Kind: c.Kind, Workflow: c.Workflow, WorkflowVersion: c.WorkflowVersion, Context: string(c.Context),
		Resumable: prep.Tool.Info.Hints.Retryable(),
	}, args, prep, nil
}

// hold counts a run against its tenant's bound in this process.
func (e *Executor) hold(id string, tenant switchboard.TenantID) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "Switchboard is shutting down; start the run again in a few seconds"}
	}
	if _, ok := e.local[id]; ok {
		// Two accepts of one confirmation, or a recovery scan meeting a run held here:
		// the second must not replace the first's entry, whose release would remove it.
		return switchboard.Errorf(switchboard.CodeConflict, "run %s is already starting or executing here", id)
	}
	t := e.tenants[tenant]
	if t == nil {
		t = &tenantSlots{sem: make(chan struct{}, e.o.MaxPerTenant)}
		e.tenants[tenant] = t
	}
	if t.held >= e.o.MaxQueuedPerTenant {
		return &switchboard.Error{Code: switchboard.CodeRateLimited, RetryAfter: 10 * time.Second,
			Message: fmt.Sprintf("this tenant already has %d runs in progress; wait for some to finish and retry", t.held)}
	}
	t.held++
	e.local[id] = &localRun{tenant: tenant, done: make(chan struct{})}
	return nil
}

// release ends a held run.
func (e *Executor) release(id string, tenant switchboard.TenantID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if lr, ok := e.local[id]; ok {
		close(lr.done)
		delete(e.local, id)
	}
	if t := e.tenants[tenant]; t != nil {
		t.held--
		if t.held <= 0 {
			delete(e.tenants, tenant)
		}
	}
}

// dispatch executes a held run in the background, once one of its tenant's slots is free.
func (e *Executor) dispatch(r Run, nested bool) {
	e.mu.Lock()
	t := e.tenants[r.TenantID]
	lr := e.local[r.ID]
	ctx, cancel := context.WithCancel(context.Background())
	if lr.caller != nil {
		ctx = providers.WithCaller(ctx, lr.caller)
	}
	lr.cancel = cancel
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer cancel()
		defer e.release(r.ID, r.TenantID)
		if !nested {
			select {
			case t.sem <- struct{}{}:
				defer func() { <-t.sem }()
			case <-ctx.Done():
				e.canceledWaiting(r)
				return
			case <-e.stop:
				return // shutting down: the lease runs out and the run is recovered
			}
		}
		if e.o.Slots != nil {
			release, ok := e.sharedSlot(ctx, r)
			if !ok {
				return
			}
			defer release()
		}
		e.execute(ctx, r)
	}()
}

// canceledWaiting records the audit row of a run canceled while it waited for a slot;
// the store already says it was canceled. The call ends without reaching the router,
// so its audit row is left here.
func (e *Executor) canceledWaiting(r Run) {
	if !e.stopping() {
		e.canceledBeforeExecuting(r)
	}
}

// slotPoll is how often a run waiting for its tenant's shared slot asks again.
const slotPoll = 100 * time.Millisecond

// sharedSlot waits for one of the tenant's slots shared by the fleet and keeps it
// renewed (within the lease) until release; ok is false when the run was canceled or
// the executor stopped while it waited.
func (e *Executor) sharedSlot(ctx context.Context, r Run) (release func(), ok bool) {
	key, holder := "runs:"+string(r.TenantID), r.ID
	tick := time.NewTicker(slotPoll)
	defer tick.Stop()
	for !e.o.Slots.Acquire(ctx, key, holder, e.o.MaxPerTenant, e.o.Lease) {
		select {
		case <-ctx.Done():
			e.canceledWaiting(r)
			return nil, false
		case <-e.stop:
			return nil, false
		case <-tick.C:
		}
	}
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(e.o.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				e.o.Slots.Renew(context.WithoutCancel(ctx), key, holder, e.o.Lease)
			}
		}
	}()
	return func() {
		close(done)
		<-renewed
		e.o.Slots.Release(context.WithoutCancel(ctx), key, holder)
	}, true
}

// execute runs one attempt and records its outcome.
func (e *Executor) execute(ctx context.Context, r Run) {
	store := context.WithoutCancel(ctx)
	ok, err := e.store.claim(store, r.TenantID, r.ID, e.o.Node, e.store.now().Add(e.o.Lease))
	if err != nil {
		e.log.Error("start run", "run", r.ID, "err", err)
		return
	}
	if !ok {
		// Canceled or taken over meanwhile; a canceled run ends here without reaching
		// the router, so its audit row is left here.
		if now, err := e.store.get(store, r.TenantID, r.ID); err == nil && now.State == StateCanceled && now.ErrorCode != "declined" {
			e.canceledBeforeExecuting(r)
		}
		return
	}
	input, err := e.store.input(store, &r)
	if err != nil {
		e.log.Error("open run input", "run", r.ID, "err", err)
		e.finishFailed(store, r, switchboard.Internal(err))
		return
	}
	req := router.Request{Tool: r.Tool, ConnectionID: r.ConnectionID, Args: input, Confirmed: r.ElicitationAction == "accept"}
	limit := e.limit(ctx, r.principal(), req)
	runCtx, cancel := context.WithTimeout(WithID(ctx, r.ID), limit)
	out, err := e.o.Runner.Execute(runCtx, r.principal(), req)
	defer clear(input) // after the output is encoded: it may share the input's bytes
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	cancel()
	if ctx.Err() != nil && !timedOut {
		return // canceled: the store already says so
	}
	if err != nil {
		if !timedOut && e.paused(store, r, err) {
			return
		}
		if timedOut {
			err = switchboard.Errorf(switchboard.CodeUpstream, "the run took longer than %s and was stopped", limit)
		}
		e.finishFailed(store, r, err)
		return
	}
	raw, err := providers.MarshalOutput(out)
	if err != nil {
		e.finishFailed(store, r, switchboard.Internal(fmt.Errorf("encode output of %s: %w", r.Tool, err)))
		return
	}
	if _, err := e.store.complete(store, r.TenantID, r.ID, e.o.Node, raw); err != nil {
		e.log.Error("record run output", "run", r.ID, "err", err)
	}
}

// limit is the time limit of one execution of req: the Runner's own for it, else
// RunTimeout.
func (e *Executor) limit(ctx context.Context, p switchboard.Principal, req router.Request) time.Duration {
	if l, ok := e.o.Runner.(Limiter); ok {
		if d := l.Limit(ctx, p, req); d > 0 {
			return d
		}
	}
	return e.o.RunTimeout
}

type runIDKey struct{}

// WithID returns ctx naming the run a Runner's call executes: a Runner that keeps
// state of its own per run (a workflow's steps) finds the run's id with IDFrom.
func WithID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

// IDFrom returns the id of the run whose call ctx belongs to.
func IDFrom(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(runIDKey{}).(string)
	return id, ok && id != ""
}

func (e *Executor) finishFailed(ctx context.Context, r Run, err error) {
	code := string(switchboard.CodeOf(err))
	if _, ferr := e.store.fail(ctx, r.TenantID, r.ID, e.o.Node, code, e.o.Describe(err)); ferr != nil {
		e.log.Error("record run failure", "run", r.ID, "err", ferr)
	}
}

// describe is the default Describe: the error's message, generic for internal errors.
func describe(err error) string {
	var ue *providers.UpstreamError
	if errors.As(err, &ue) {
		msg := ue.Error()
		if ue.Code == switchboard.CodeRateLimited && ue.RetryAfter > 0 {
			msg += fmt.Sprintf(" (retry after %d s)", int((ue.RetryAfter+time.Second-1)/time.Second))
		}
		return msg
	}
	e := switchboard.AsError(err)
	switch {
	case e.Code == switchboard.CodeInternal:
		return "Switchboard failed to run this tool (internal error); the operator has the details"
	case e.Field != "":
		return e.Field + ": " + e.Message
	default:
		return e.Message
	}
}

// Get returns one of the principal's own runs, with its output once completed.
func (e *Executor) Get(ctx context.Context, p switchboard.Principal, id string) (View, error) {
	r, err := e.store.Get(ctx, p, id)
	if err != nil {
		return View{}, err
	}
	v, err := e.view(ctx, &r)
	return e.linked(v), err
}

func (e *Executor) view(ctx context.Context, r *Run) (View, error) {
	out, err := e.store.Output(ctx, r)
	if err != nil {
		return View{}, err
	}
	reqs, err := e.store.inputRequests(ctx, r)
	if err != nil {
		return View{}, err
	}
	v := r.view(out)
	v.InputRequests = reqs
	return v, nil
}

// List returns the principal's own runs, newest first, without their outputs (Get
// has them), and the cursor of the next page.
func (e *Executor) List(ctx context.Context, p switchboard.Principal, o ListOptions) ([]View, string, error) {
	rs, next, err := e.store.List(ctx, p, o)
	if err != nil {
		return nil, "", err
	}
	out := make([]View, 0, len(rs))
	for i := range rs {
		out = append(out, e.linked(rs[i].view(nil)))
	}
	return out, next, nil
}

// stopping reports whether the executor is closing (its runs' contexts end with it,
// and they are recovered later: they were not canceled).
func (e *Executor) stopping() bool {
	select {
	case <-e.stop:
		return true
	default:
		return false
	}
}

// canceledBeforeExecuting leaves the audit row of a run canceled before it reached
// the router.
func (e *Executor) canceledBeforeExecuting(r Run) {
	if e.o.Gate != nil {
		e.o.Gate.Refused(r.principal(), router.Request{Tool: r.Tool, ConnectionID: r.ConnectionID}, canceledByCaller)
	}
}

// canceledByCaller is why a run canceled before it executed did not run.
var canceledByCaller = &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the run was canceled by its caller before it executed"}

// Cancel ends one of the principal's runs that has not ended: a waiting run never
// executes, an executing one is stopped (its upstream request may still have taken
// effect). A run that already ended is a conflict.
func (e *Executor) Cancel(ctx context.Context, p switchboard.Principal, id string) (View, error) {
	return e.CancelBecause(ctx, p, id, "")
}

// CancelBecause cancels as Cancel does, recording the caller's reason (when one is
// given) as the run's error message.
func (e *Executor) CancelBecause(ctx context.Context, p switchboard.Principal, id, reason string) (View, error) {
	message := "canceled by the caller"
	if reason = strings.TrimSpace(reason); reason != "" {
		message += ": " + reason
	}
	ok, err := e.store.cancel(ctx, p, id, "canceled", message)
	if err != nil {
		return View{}, err
	}
	r, err := e.store.Get(ctx, p, id)
	if err != nil {
		return View{}, err
	}
	if !ok {
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s already ended (%s); it cannot be canceled", id, r.State)
	}
	if r.ElicitationMessage != "" && r.ElicitationAction == "" {
		// It waited for its confirmation: the confirmation ends here.
		e.confirmation(router.KindConfirmationDeclined, p, &r, "run "+id+": canceled by the caller")
	}
	e.stopLocal(id)
	events.PublishAfterCommit(ctx, e.o.Feed, e.log, events.Event{Kind: events.RunCanceled, Tenant: p.TenantID, ID: id})
	return e.view(ctx, &r)
}

// stopLocal cancels the context of a run this process holds.
func (e *Executor) stopLocal(id string) { e.stopLocalOf("", id) }

// stopLocalOf cancels the context of a run this process holds, if it is the tenant's
// (any tenant's when tenant is empty).
func (e *Executor) stopLocalOf(tenant switchboard.TenantID, id string) {
	e.mu.Lock()
	var cancel context.CancelFunc
	if lr := e.local[id]; lr != nil && (tenant == "" || lr.tenant == tenant) {
		cancel = lr.cancel
	}
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Answer applies the answer the caller relays for one of its own input_required runs
// (switchboard_submit_elicitation): accept starts it; decline or cancel ends it,
// canceled, without running anything. Where the principal's policy wants a person's
// approval (approval: person), only the approval page may answer (Approve), and this
// is refused.
func (e *Executor) Answer(ctx context.Context, p switchboard.Principal, id, action string) (View, error) {
	switch action {
	case "accept", "decline", "cancel":
	default:
		return View{}, switchboard.Invalid("action", "must be accept, decline or cancel")
	}
	r, err := e.store.Get(ctx, p, id)
	if err != nil {
		return View{}, err
	}
	if e.o.Gate != nil {
		pol, err := e.o.Gate.Policy(ctx, p)
		if err != nil {
			return View{}, err
		}
		if pol.Approval == router.ApprovalPerson {
			where := "its approval page in the Switchboard UI"
			if e.o.ApprovalURL != nil {
				where = e.o.ApprovalURL(id)
			}
			return View{}, switchboard.Errorf(switchboard.CodeForbidden,
				"this caller's confirmations must come from a signed-in person (approval: person), not from the agent: ask the person to approve or decline run %s at %s", id, where)
		}
	}
	return e.answer(ctx, p, &r, p, action, "relayed by the caller")
}

// answer applies an answer to an input_required run: r is the run, owner the
// principal it belongs to (and runs as), who the one answering, and how says how the
// answer came (for the audit row).
func (e *Executor) answer(ctx context.Context, owner switchboard.Principal, r *Run, who switchboard.Principal, action, how string) (View, error) {
	id := r.ID
	if r.State != StateInputRequired {
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s is %s, not waiting for a confirmation", id, r.State)
	}
	if r.paused() {
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s waits for data a step asks its person for, not for a confirmation: answer it with submit_flow_elicitation", id)
	}
	if r.ElicitationExpiresAt != nil && !e.store.now().Before(*r.ElicitationExpiresAt) {
		if err := e.store.expire(ctx, owner, id); err != nil {
			return View{}, err
		}
		e.confirmation(router.KindConfirmationTimedOut, owner, r, "run "+id+": answered after the confirmation expired")
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "the confirmation of run %s expired, so it was not run; start it again", id)
	}
	if action != "accept" {
		msg := "the person declined, so nothing was run"
		if action == "cancel" {
			msg = "the person dismissed the confirmation, so nothing was run"
		}
		ok, err := e.store.refuse(ctx, owner, id, action, msg)
		if err != nil {
			return View{}, err
		}
		if !ok {
			return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s changed meanwhile; read it again", id)
		}
		e.confirmation(router.KindConfirmationDeclined, who, r, fmt.Sprintf("run %s: %s (%s)", id, action, how))
		return e.Get(ctx, owner, id)
	}
	if err := e.hold(id, owner.TenantID); err != nil {
		return View{}, err
	}
	ok, err := e.store.accept(ctx, owner, id, e.o.Node, e.store.now().Add(e.o.Lease))
	if err != nil || !ok {
		e.release(id, owner.TenantID)
		if err != nil {
			return View{}, err
		}
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s changed meanwhile or its confirmation expired; read it again", id)
	}
	e.confirmation(router.KindConfirmationAccepted, who, r, fmt.Sprintf("run %s: accept (%s)", id, how))
	run, err := e.store.Get(ctx, owner, id)
	if err != nil {
		e.release(id, owner.TenantID)
		return View{}, err
	}
	e.dispatch(run, false)
	return run.view(nil), nil
}

// Wait blocks until one of the principal's runs reaches a final state, or pauses for
// a person's input (View.Paused), or ctx ends, and returns it. It notices runs of
// this process at once and polls for others.
func (e *Executor) Wait(ctx context.Context, p switchboard.Principal, id string, poll time.Duration) (View, error) {
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		v, err := e.Get(ctx, p, id)
		if err != nil || v.State.Final() || v.Paused() {
			return v, err
		}
		e.mu.Lock()
		var done chan struct{}
		if lr := e.local[id]; lr != nil {
			done = lr.done
		}
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-done: // nil when the run is not held here: only the ticker fires
		case <-t.C:
		}
	}
}
