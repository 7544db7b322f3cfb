package runs

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
)

// Runner runs one tool call for a principal: the router.
type Runner interface {
	Execute(ctx context.Context, p switchboard.Principal, req router.Request) (any, error)
}

// Options configure an Executor.
type Options struct {
	Store    *Store
	Runner   Runner
	Registry *providers.Registry // the tools' hints: which runs may run again after a crash
	Logger   *slog.Logger
	// MaxPerTenant bounds the runs of one tenant that execute at once (default 4);
	// more wait their turn, in the working state.
	MaxPerTenant int
	// MaxQueuedPerTenant bounds the runs of one tenant that this process holds, waiting
	// or executing (default 64); more are refused as rate limited.
	MaxQueuedPerTenant int
	// RunTimeout bounds one execution (default 5 minutes).
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
	return &Executor{
		o: o, store: o.Store, log: o.Logger,
		tenants: map[switchboard.TenantID]*tenantSlots{},
		local:   map[string]*localRun{},
		stop:    make(chan struct{}),
	}
}

// Call is what a run runs: a tool on one connection with its arguments (already
// resolved from the MCP call: the connection argument is removed).
type Call struct {
	Tool         string
	ConnectionID string
	Args         json.RawMessage
	Origin       Origin
	// Spec is the tool, when the caller has it: a connection's own tools (a remote MCP
	// server's) are not in the registry. Without it the registry's tool is used.
	Spec *providers.Tool
}

// Start stores a new run of the call for the principal and starts it; it answers at
// once, with the run in the working state. The arguments are checked against the
// tool's schema first, so a bad call is refused here rather than failing later.
func (e *Executor) Start(ctx context.Context, p switchboard.Principal, c Call) (View, error) {
	r, input, err := e.newRun(p, c)
	if err != nil {
		return View{}, err
	}
	if err := e.hold(r.ID, p.TenantID); err != nil {
		return View{}, err
	}
	r.State = StateWorking
	r.LeaseOwner = e.o.Node
	until := e.store.now().Add(e.o.Lease)
	r.LeaseUntil = &until
	if err := e.store.create(ctx, r, input); err != nil {
		e.release(r.ID, p.TenantID)
		return View{}, err
	}
	e.dispatch(*r)
	return r.view(nil), nil
}

// StartConfirm stores a new run of the call that waits, input_required, for a
// person's confirmation (see Answer); message says what will happen.
func (e *Executor) StartConfirm(ctx context.Context, p switchboard.Principal, c Call, message string) (View, error) {
	r, input, err := e.newRun(p, c)
	if err != nil {
		return View{}, err
	}
	r.State = StateInputRequired
	r.ElicitationMessage = clip(message)
	expires := e.store.now().Add(e.o.ConfirmTimeout)
	r.ElicitationExpiresAt = &expires
	if err := e.store.create(ctx, r, input); err != nil {
		return View{}, err
	}
	return r.view(nil), nil
}

// newRun checks the call and builds its row.
func (e *Executor) newRun(p switchboard.Principal, c Call) (*Run, []byte, error) {
	if p.TenantID == "" {
		return nil, nil, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "no principal"}
	}
	tool := c.Spec
	if tool == nil || tool.Name != c.Tool {
		var ok bool
		if tool, ok = e.o.Registry.Tool(c.Tool); !ok {
			return nil, nil, switchboard.Invalid("tool", fmt.Sprintf("unknown tool %q", c.Tool))
		}
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := tool.Validate(args); err != nil {
		return nil, nil, err
	}
	if c.ConnectionID == "" {
		return nil, nil, switchboard.Invalid("connection", "is required")
	}
	if c.Origin == "" {
		c.Origin = OriginAsync
	}
	return &Run{
		ID: switchboard.NewID("run"), TenantID: p.TenantID, Principal: p.ID(), PrincipalKind: p.Kind,
		UserID: p.UserID, AgentID: p.AgentID, KeyID: p.KeyID, Role: p.Role,
		Tool: c.Tool, ConnectionID: c.ConnectionID, Origin: c.Origin,
		Resumable: tool.Info.Hints.Retryable(),
	}, args, nil
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
func (e *Executor) dispatch(r Run) {
	e.mu.Lock()
	t := e.tenants[r.TenantID]
	lr := e.local[r.ID]
	ctx, cancel := context.WithCancel(context.Background())
	lr.cancel = cancel
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer cancel()
		defer e.release(r.ID, r.TenantID)
		select {
		case t.sem <- struct{}{}:
			defer func() { <-t.sem }()
		case <-ctx.Done():
			return // canceled while waiting; the store already says so
		case <-e.stop:
			return // shutting down: the lease runs out and the run is recovered
		}
		e.execute(ctx, r)
	}()
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
		return // canceled or taken over meanwhile
	}
	input, err := e.store.input(store, &r)
	if err != nil {
		e.log.Error("open run input", "run", r.ID, "err", err)
		e.finishFailed(store, r, switchboard.Internal(err))
		return
	}
	runCtx, cancel := context.WithTimeout(ctx, e.o.RunTimeout)
	out, err := e.o.Runner.Execute(runCtx, r.principal(), router.Request{Tool: r.Tool, ConnectionID: r.ConnectionID, Args: input})
	defer clear(input) // after the output is encoded: it may share the input's bytes
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	cancel()
	if ctx.Err() != nil && !timedOut {
		return // canceled: the store already says so
	}
	if err != nil {
		if timedOut {
			err = switchboard.Errorf(switchboard.CodeUpstream, "the run took longer than %s and was stopped", e.o.RunTimeout)
		}
		e.finishFailed(store, r, err)
		return
	}
	raw, err := json.Marshal(out)
	if err != nil {
		e.finishFailed(store, r, switchboard.Internal(fmt.Errorf("encode output of %s: %w", r.Tool, err)))
		return
	}
	if _, err := e.store.complete(store, r.TenantID, r.ID, e.o.Node, raw); err != nil {
		e.log.Error("record run output", "run", r.ID, "err", err)
	}
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
	return e.view(ctx, &r)
}

func (e *Executor) view(ctx context.Context, r *Run) (View, error) {
	out, err := e.store.Output(ctx, r)
	if err != nil {
		return View{}, err
	}
	return r.view(out), nil
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
		out = append(out, rs[i].view(nil))
	}
	return out, next, nil
}

// Cancel ends one of the principal's runs that has not ended: a waiting run never
// executes, an executing one is stopped (its upstream request may still have taken
// effect). A run that already ended is a conflict.
func (e *Executor) Cancel(ctx context.Context, p switchboard.Principal, id string) (View, error) {
	ok, err := e.store.cancel(ctx, p, id, "canceled", "canceled by the caller")
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
	e.stopLocal(id)
	return e.view(ctx, &r)
}

// stopLocal cancels the context of a run this process holds.
func (e *Executor) stopLocal(id string) {
	e.mu.Lock()
	var cancel context.CancelFunc
	if lr := e.local[id]; lr != nil {
		cancel = lr.cancel
	}
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Answer applies a person's answer to one of the principal's input_required runs:
// accept starts it; decline or cancel ends it, canceled, without running anything.
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
	if r.State != StateInputRequired {
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s is %s, not waiting for a confirmation", id, r.State)
	}
	if r.ElicitationExpiresAt != nil && !e.store.now().Before(*r.ElicitationExpiresAt) {
		if err := e.store.expire(ctx, p, id); err != nil {
			return View{}, err
		}
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "the confirmation of run %s expired, so it was not run; start it again", id)
	}
	if action != "accept" {
		msg := "the person declined, so nothing was run"
		if action == "cancel" {
			msg = "the person dismissed the confirmation, so nothing was run"
		}
		ok, err := e.store.refuse(ctx, p, id, action, msg)
		if err != nil {
			return View{}, err
		}
		if !ok {
			return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s changed meanwhile; read it again", id)
		}
		return e.Get(ctx, p, id)
	}
	if err := e.hold(id, p.TenantID); err != nil {
		return View{}, err
	}
	ok, err := e.store.accept(ctx, p, id, e.o.Node, e.store.now().Add(e.o.Lease))
	if err != nil || !ok {
		e.release(id, p.TenantID)
		if err != nil {
			return View{}, err
		}
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s changed meanwhile or its confirmation expired; read it again", id)
	}
	r, err = e.store.Get(ctx, p, id)
	if err != nil {
		e.release(id, p.TenantID)
		return View{}, err
	}
	e.dispatch(r)
	return r.view(nil), nil
}

// Wait blocks until one of the principal's runs reaches a final state (or ctx ends)
// and returns it. It notices runs of this process at once and polls for others.
func (e *Executor) Wait(ctx context.Context, p switchboard.Principal, id string, poll time.Duration) (View, error) {
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		v, err := e.Get(ctx, p, id)
		if err != nil || v.State.Final() {
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
