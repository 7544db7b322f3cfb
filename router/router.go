// Package router is the ExecutionRouter: it takes a principal and a tool call, checks
// that the connection belongs to the principal's tenant and that the principal may use
// it, opens the credentials, takes the connection's pooled client, runs the operation
// and leaves an audit record.
//
// Start from [Router] (built by [New] from [Options]) and its Execute; a [Request] is
// one call, a [Binding] a tool on a connection, [Prepared] a call checked and ready.
package router

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// Connections is what the router needs of the connection store.
type Connections interface {
	// Usable lists the connections of p's tenant that p may use.
	Usable(ctx context.Context, p switchboard.Principal) ([]connections.Connection, error)
	// Open returns a connection of the tenant with its credentials unsealed.
	Open(ctx context.Context, tenant switchboard.TenantID, id string) (connections.Connection, connections.Credentials, error)
	// MarkNeedsReconnect records that the provider refused the connection's credentials
	// (as of the given version), on behalf of the principal whose call found out.
	MarkNeedsReconnect(ctx context.Context, p switchboard.Principal, id string, version int64) error
}

// Agents says what an agent's key may call: the tools its agent selected, and whose
// private connections they may run on (agents.Service has these methods). Without it,
// an agent's key calls nothing.
type Agents interface {
	// PrivateUser returns the user whose private connections the principal may use:
	// a user's own; for an agent's key, its agent's creator when the creator saved
	// the agent last and created the key, else "".
	PrivateUser(ctx context.Context, p switchboard.Principal) (string, error)
	// Selection returns the tools an agent's key may call: its agent's, each with the
	// connection the agent bound it to (none for a workflow, whose steps are each
	// checked against the same selection when they run).
	Selection(ctx context.Context, p switchboard.Principal) ([]Selected, error)
}

// Selected is one tool of an agent's selection and the connection it is bound to.
type Selected struct {
	Tool         string
	ConnectionID string
}

// saturated is implemented by audit recorders that can say they are not keeping up
// (the database is slow or down), so calls are refused instead of hanging.
type saturated interface {
	Saturated() bool
}

// Router runs tool calls. It is safe for concurrent use.
type Router struct {
	registry *providers.Registry
	conns    Connections
	audit    audit.Recorder
	pool     *pool
	log      *slog.Logger
	argsKey  []byte
	// macs holds HMACs keyed with argsKey: a new one hashes the key twice, and reset
	// one starts from those sums.
	macs     sync.Pool
	now      func() time.Time
	policies Policies
	agents   Agents
	tel      *telemetry.Telemetry
	admit    *limits.Admission
	refusals *telemetry.Refusals
	// deadlines override every provider's operation deadlines where set.
	deadlines providers.Deadlines
	// active counts the calls under way; draining refuses new ones (see Drain).
	active   atomic.Int64
	draining atomic.Bool
	// cut ends when the calls still under way at the end of a drain are stopped (Cut).
	cut    context.Context
	cutAll context.CancelCauseFunc
	// node names this node in the rows of calls in flight.
	node string
}

// Options configure a Router.
type Options struct {
	Registry    *providers.Registry
	Connections Connections
	Audit       audit.Recorder
	Transports  *providers.Transports
	Logger      *slog.Logger
	// ClientTTL bounds how long a connection's cached client and record are trusted
	// before they are re-read (another node may have changed the connection).
	ClientTTL time.Duration
	// ArgsKey keys the HMAC-SHA-256 of a call's arguments in its audit record, so short
	// arguments cannot be guessed from the log. Derive it from the deployment's secret.
	ArgsKey []byte
	// Policies, when set, supplies each principal's confirm policy: calls it covers run
	// only once confirmed.
	Policies Policies
	// Agents says which tools an agent's key may call, on which connections, and
	// whose private connections it may use; without it an agent's key calls nothing.
	Agents Agents
	// Telemetry, when set, gets each call's span and metrics.
	Telemetry *telemetry.Telemetry
	// Limits keeps connections' rate-limit state: nil keeps it in this process (one
	// node); limits.Redis shares it between the nodes of a fleet.
	Limits limits.Upstream
	// Admission, when set, bounds the calls the node works on at once; calls beyond
	// it are refused with a Retry-After.
	Admission *limits.Admission
	// Refusals, when set, counts calls refused before they ran.
	Refusals *telemetry.Refusals
	// Deadlines, where set, override every provider's deadlines (Spec.Deadlines) of
	// read-only and of other operations.
	Deadlines providers.Deadlines
	// Node is this node's id in the fleet: a call's audit row, written before its
	// upstream request leaves, names it until the call completes, so that the row of a
	// call whose node stopped meanwhile is marked outcome_unknown (audit.MarkUnfinished).
	Node string
}

// New returns a Router.
func New(o Options) *Router {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Transports == nil {
		o.Transports = &providers.Transports{}
	}
	if o.ClientTTL <= 0 {
		o.ClientTTL = 30 * time.Second
	}
	r := &Router{
		registry:  o.Registry,
		conns:     o.Connections,
		audit:     o.Audit,
		pool:      newPool(o.Registry, o.Connections, o.Transports, o.ClientTTL, o.Limits),
		log:       o.Logger,
		argsKey:   o.ArgsKey,
		now:       time.Now,
		policies:  o.Policies,
		agents:    o.Agents,
		tel:       o.Telemetry,
		admit:     o.Admission,
		refusals:  o.Refusals,
		deadlines: o.Deadlines,
		node:      o.Node,
	}
	r.cut, r.cutAll = context.WithCancelCause(context.Background())
	r.macs.New = func() any { return hmac.New(sha256.New, r.argsKey) }
	return r
}

// Request is one tool call.
type Request struct {
	Tool         string          // {provider}_{operation}
	ConnectionID string          // the connection to run it on
	Args         json.RawMessage // the arguments, validated against the tool's input schema first
	// Confirmed says a person confirmed this call (its run was accepted, or the MCP
	// client's form was): set only by the code that took the confirmation. A call the
	// principal's confirm policy covers runs only when it is set.
	Confirmed bool
}

// Prepared is a call that passed the router's checks: the tool it runs and whether
// the principal's policy wants a person's confirmation first.
type Prepared struct {
	Tool         *providers.Tool
	NeedsConfirm bool
	// Policy is the principal's confirm policy.
	Policy Policy

	entry *entry
}

// Account is the label of the connection the call runs on ("" for a tool that runs on
// none).
func (pc Prepared) Account() string {
	if pc.entry == nil {
		return ""
	}
	return pc.entry.conn.AccountLabel
}

// Prepare checks a call as Execute would, without running it: the tool exists and is
// the principal's to call on that connection, the arguments are valid, and whether the
// call must be confirmed first. A refused call leaves its audit row, as Execute's
// would; a prepared one leaves none (its execution will).
func (r *Router) Prepare(ctx context.Context, p switchboard.Principal, req Request) (Prepared, error) {
	start := r.now()
	pc, err := r.prepare(ctx, p, req)
	if err != nil {
		r.record(ctx, r.event(ctx, auditID(ctx), p, req, start), 0, err)
	}
	return pc, err
}

// Check is Prepare without an audit row: a page's look at a call before it asks a
// person to confirm it (the tool, the connection, the arguments, whether the confirm
// policy covers it). It runs nothing; the call itself, made next, is audited.
func (r *Router) Check(ctx context.Context, p switchboard.Principal, req Request) (Prepared, error) {
	return r.prepare(ctx, p, req)
}

// logUnreachable tells the operator, when a call's upstream could not be reached,
// where the hub dialled and what the network said (refused, no such host, timed out),
// whatever the provider made of the failure in its answer.
func (r *Router) logUnreachable(ctx context.Context, tool *providers.Tool, conn *connections.Connection, err error) {
	var oe *net.OpError
	if !errors.As(err, &oe) {
		return
	}
	addr := ""
	if oe.Addr != nil {
		addr = oe.Addr.String()
	}
	r.log.WarnContext(ctx, "upstream could not be reached", "provider", tool.Provider.Name, "tool", tool.Name, "connection", conn.ID,
		"op", oe.Op, "addr", addr, "err", oe.Err)
}

// Execute runs a tool call for the principal. Errors are *switchboard.Error or
// *providers.UpstreamError (see switchboard.CodeOf); internal failures are logged
// here with detail and returned with a generic message. A call the principal's
// confirm policy covers is refused (confirmation_required) unless req.Confirmed.
func (r *Router) Execute(ctx context.Context, p switchboard.Principal, req Request) (out any, err error) {
	r.active.Add(1)
	defer r.active.Add(-1)
	if r.draining.Load() {
		r.refusals.Refused("node", "draining")
		return nil, errDraining
	}
	if s, ok := r.audit.(saturated); ok && s.Saturated() {
		// Nothing runs that could not be audited; the refusal itself is not queued.
		r.refusals.Refused("audit", "audit_behind")
		return nil, &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: auditRetry,
			Message: fmt.Sprintf("the audit log is not keeping up (its database is slow or down), so nothing was run; retry in %d s", int(auditRetry/time.Second))}
	}
	if !limits.SlotFrom(ctx).Open() {
		// Not admitted at its door (the MCP adapter admits before it reads a request;
		// REST calls and runs come here first): admitted here.
		slot, err := r.admit.Admit(ctx, p.TenantID)
		if err != nil {
			if se := (*switchboard.Error)(nil); errors.As(err, &se) {
				return nil, err // refused before running, counted by the admission
			}
			return nil, &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the call was canceled by its caller before it ran", Err: err}
		}
		defer slot.Release()
		ctx = limits.WithSlot(ctx, slot)
	}
	start := r.now()
	status := &upstreamStatus{}
	ctx = withAuditNote(ctx)
	ctx, span := r.startSpan(ctx, p, req)
	var tool *providers.Tool // the tool that ran, for the metrics' labels
	var row audit.Event      // the call's audit row, written in flight, then completed
	if r.audit != nil {
		row = r.event(ctx, callAuditID(ctx, start), p, req, start)
	}
	defer func() {
		if aerr := r.record(ctx, row, int(status.code.Load()), err); aerr != nil && err == nil {
			// No answer leaves without its audit row.
			out, err = nil, &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: auditRetry, Err: aerr,
				Message: "the call ran, but its audit record could not be written, so its answer is withheld; check its effect before retrying"}
		}
		r.observe(req, tool, start, status, err)
		telemetry.EndSpan(span, err)
	}()
	pc, err := r.prepare(ctx, p, req)
	if err != nil {
		return nil, err
	}
	if pc.NeedsConfirm && !req.Confirmed {
		return nil, confirmationRequired(req.Tool)
	}
	tool = pc.Tool
	if pc.entry == nil {
		return r.runConnectionless(ctx, p, tool, req)
	}
	conn := &pc.entry.conn
	call := &providers.Call{Tenant: p.TenantID, Principal: p, ConnectionID: conn.ID, BaseURL: r.registry.BaseURL(conn.Provider), HTTP: pc.entry.client, Meta: conn.Meta, Limiter: pc.entry.lim}
	hints := tool.Info.Hints
	// The row of a call that may change something is on record before anything of it
	// leaves: a node killed while the request is under way leaves the row in flight,
	// which recovery marks outcome_unknown. A read's row is written on its answer: a
	// read cut short changed nothing, and it spares the call a commit.
	if !hints.ReadOnly {
		if err := r.intent(ctx, row); err != nil {
			return nil, err
		}
	}
	deadline := tool.Provider.Deadlines.For(hints, r.deadlines)
	// A call still under way when the node's drain ends is stopped (Cut), and answered.
	cutCtx, cutCall := context.WithCancelCause(ctx)
	stopCut := context.AfterFunc(r.cut, func() { cutCall(errCut) })
	defer func() {
		stopCut()
		cutCall(nil)
	}()
	opCtx, cancel := context.WithTimeoutCause(cutCtx, deadline, errDeadline)
	defer cancel()
	out, err = tool.Op.Invoke(withStatus(opCtx, status), call, req.Args)
	if err != nil {
		if ctx.Err() != nil {
			return nil, r.stopped(ctx, err)
		}
		// A request that changes something, sent in full, whose answer was lost: it
		// may have taken effect. Saying "retry" would invite a duplicate.
		sent := status.wrote.Load() && !hints.Retryable()
		if context.Cause(opCtx) == errCut {
			if sent {
				return nil, outcomeUnknown(tool, "this server shut down while the call was under way", err)
			}
			return nil, errCutUnsent
		}
		r.logUnreachable(ctx, tool, conn, err)
		if context.Cause(opCtx) == errDeadline {
			if sent {
				return nil, outcomeUnknown(tool, fmt.Sprintf("%s did not answer within %s", tool.Provider.Title, deadline), err)
			}
			return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Err: err,
				Message: fmt.Sprintf("%s did not answer within %s, so the call was stopped; nothing that changes anything was sent; retrying later may help", tool.Provider.Title, deadline)}
		}
		var ue *providers.UpstreamError
		if errors.As(err, &ue) {
			if ue.Code == switchboard.CodeReconnect {
				r.needsReconnect(ctx, p, conn)
			}
			return nil, upstreamFailure(err, ue)
		}
		var netErr *url.Error
		if sent && errors.As(err, &netErr) {
			// Before a provider's own "could not be reached; try again"
			// (providers.JSONRequest's), which would invite the duplicate.
			return nil, outcomeUnknown(tool, fmt.Sprintf("the connection to %s broke before its answer (%v)", tool.Provider.Title, netErr.Err), err)
		}
		var se *switchboard.Error
		if errors.As(err, &se) && se.Code != switchboard.CodeInternal {
			// The token source failed with a reason of its own (a refresh token the
			// provider refused, which marked the connection already; a token endpoint
			// that rate limits): more use to the caller than "could not reach".
			if se.Code == switchboard.CodeReconnect {
				r.pool.forget(conn.ID)
			}
			return nil, se
		}
		if errors.As(err, &netErr) {
			return nil, &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not reach %s: %v; retrying later may help", tool.Provider.Title, netErr.Err), Err: err}
		}
		return nil, r.internal(ctx, err, "run %s", tool.Name)
	}
	return out, nil
}

// upstreamFailure is the error of a call its upstream refused: ue without the
// transport's wrapping (which repeats the URL), under the argument the provider's
// client named when it named one (GitHub's 422 errors[].field, Jira's 400 errors), so
// the REST answer's field and the MCP tool error say what to fix.
func upstreamFailure(err error, ue *providers.UpstreamError) error {
	var se *switchboard.Error
	if !errors.As(err, &se) || se.Field == "" {
		return ue
	}
	return &switchboard.Error{Code: se.Code, Field: se.Field, Message: ue.Error(), RetryAfter: ue.RetryAfter, Err: ue}
}

// errDeadline is the cause of a call stopped by its operation's deadline.
var errDeadline = errors.New("the operation's deadline passed")

// outcomeUnknown is the error of a write sent upstream whose answer was lost.
func outcomeUnknown(tool *providers.Tool, what string, err error) error {
	return &switchboard.Error{Code: switchboard.CodeOutcomeUnknown, Err: err,
		Message: fmt.Sprintf("%s was sent; the outcome is unknown: check before retrying (%s); it was not retried", tool.Name, what)}
}

// stopped is the error of a call whose context ended while it ran: canceled by its
// caller, or out of time.
func (r *Router) stopped(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: "the call took too long and was stopped; its upstream request may still have taken effect", Err: err}
	}
	return &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the call was canceled by its caller; its upstream request may still have taken effect", Err: err}
}

// notLoaded answers a call or listing that waited for providers still loading (an
// operator's API descriptions, read after start-up) and either outlived its context or
// found its provider failed to load.
func notLoaded(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: time.Second, Message: "the hub is still loading its providers; nothing was sent upstream", Err: err}
	case ctx.Err() != nil:
		return &switchboard.Error{Code: switchboard.CodeCanceled, Message: "the call was canceled while the hub was loading its providers; nothing was sent upstream", Err: err}
	}
	return &switchboard.Error{Code: switchboard.CodeUnavailable, Message: err.Error() + "; the operator must fix its description", Err: err}
}

// prepare runs the checks of a call, in the order a caller can act on: the tool, its
// arguments, the connection (its tenant, the principal's right to use it, its
// provider and status), then the confirm policy. A tool outside the registry is looked
// for among the connection's own (a provider whose tools exist per connection), once
// the connection is known to be the principal's.
func (r *Router) prepare(ctx context.Context, p switchboard.Principal, req Request) (Prepared, error) {
	if err := r.registry.AwaitTool(ctx, req.Tool); err != nil {
		return Prepared{}, notLoaded(ctx, err)
	}
	tool, registered := r.registry.Tool(req.Tool)
	if registered && tool.Provider.Connectionless {
		return r.prepareConnectionless(ctx, p, req, tool)
	}
	if !registered && r.registry.PerTenant() {
		t, err := r.registry.TenantTool(ctx, p.TenantID, req.Tool)
		if err != nil {
			return Prepared{}, r.internal(ctx, err, "list the tools of tenant %s", p.TenantID)
		}
		if t != nil {
			return r.prepareConnectionless(ctx, p, req, t)
		}
	}
	if !registered && !r.registry.PerConnection() {
		return Prepared{}, switchboard.NotFound("tool " + req.Tool)
	}
	if registered {
		if err := tool.Validate(req.Args); err != nil {
			return Prepared{}, err
		}
	}
	if req.ConnectionID == "" {
		return Prepared{}, switchboard.Invalid("connection", "is required")
	}
	if p.Kind != switchboard.PrincipalUser {
		if err := r.checkSelected(ctx, p, req); err != nil {
			return Prepared{}, err
		}
	}
	// A tool that may be the connection's own is not named until the connection is the
	// principal's: the same answer as for a tool that does not exist, so nothing leaks.
	unknown := func() error {
		if !registered {
			return switchboard.NotFound("tool " + req.Tool)
		}
		return switchboard.NotFound("connection")
	}
	entry, err := r.pool.get(ctx, p.TenantID, req.ConnectionID)
	if err != nil {
		if !registered && switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return Prepared{}, unknown()
		}
		return Prepared{}, r.internal(ctx, err, "open connection %s", req.ConnectionID)
	}
	conn := &entry.conn
	user, err := r.connectionUser(ctx, p)
	if err != nil {
		return Prepared{}, r.internal(ctx, err, "read whose connections %s may use", p.ID())
	}
	if !conn.UsableBy(user) {
		if p.Kind == switchboard.PrincipalAgent && conn.TenantID == p.TenantID && !conn.Shared {
			// The agent's own binding (the adapter and the API pass no other), so
			// saying why leaks nothing its key cannot read from its agent.
			return Prepared{}, errPrivateForAgent
		}
		return Prepared{}, unknown()
	}
	spec := entry.spec
	if conn.Status == connections.StatusNeedsReconnect || conn.Status == connections.StatusRevoked {
		if registered && conn.Provider != tool.Provider.Name {
			return Prepared{}, wrongProvider(conn, tool)
		}
		return Prepared{}, &switchboard.Error{Code: switchboard.CodeReconnect, Message: fmt.Sprintf("the %s connection %q needs to be reconnected before it can be used", spec.Title, conn.AccountLabel)}
	}
	if !registered {
		if tool, err = r.registry.ConnectionTool(ctx, conn.Ref(), req.Tool); err != nil {
			return Prepared{}, r.internal(ctx, err, "list tools of connection %s", conn.ID)
		}
		if tool == nil {
			return Prepared{}, unknown()
		}
		if err := tool.Validate(req.Args); err != nil {
			return Prepared{}, err
		}
	}
	if conn.Provider != tool.Provider.Name {
		return Prepared{}, wrongProvider(conn, tool)
	}
	pol, err := r.Policy(ctx, p)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Tool: tool, NeedsConfirm: pol.Covers(tool), Policy: pol, entry: entry}, nil
}

// wrongProvider refuses a tool on a connection of another provider.
func wrongProvider(conn *connections.Connection, tool *providers.Tool) error {
	return switchboard.Invalid("connection", fmt.Sprintf("is a %s connection; %s needs a %s connection", conn.Provider, tool.Name, tool.Provider.Name))
}

// internal logs and hides an error that carries no code; coded errors pass through.
func (r *Router) internal(ctx context.Context, err error, format string, args ...any) error {
	if switchboard.CodeOf(err) != switchboard.CodeInternal {
		return err
	}
	var e *switchboard.Error
	if errors.As(err, &e) && e.Err == nil {
		return err
	}
	if switchboard.DatabaseDown(err) {
		// Not a bug: the caller is told to come back, and the logs say it once (the
		// log handler summarises the same error repeated).
		r.log.WarnContext(ctx, fmt.Sprintf(format, args...), "err", err)
		return switchboard.Unavailable(err)
	}
	r.log.ErrorContext(ctx, fmt.Sprintf(format, args...), "err", err)
	return switchboard.Internal(err)
}

// auditRetry is the wait advised when the audit log cannot take a call.
const auditRetry = 5 * time.Second

// auditWait bounds how long a call's answer waits for its audit row's commit.
const auditWait = 10 * time.Second

// committer is implemented by recorders that can say when an event is durable
// (audit.Writer): a call's answer waits for its row.
type committer interface {
	Commit(ctx context.Context, e audit.Event) error
}

// event is the audit row of a call begun at start, before its outcome is known.
func (r *Router) event(ctx context.Context, id string, p switchboard.Principal, req Request, start time.Time) audit.Event {
	if r.audit == nil {
		return audit.Event{}
	}
	mac := r.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(req.Args)
	var sum [sha256.Size]byte
	argsHash := hex.EncodeToString(mac.Sum(sum[:0]))
	r.macs.Put(mac)
	return audit.Event{
		ID:           id,
		TenantID:     p.TenantID,
		At:           start,
		Kind:         audit.KindToolCall,
		Principal:    p.ID(),
		KeyID:        p.KeyID,
		Tool:         req.Tool,
		ConnectionID: req.ConnectionID,
		ArgsHash:     argsHash,
		Detail:       auditDetail(ctx),
	}
}

// intent writes the row of a call about to send its upstream requests, in flight, and
// waits until it is committed: the error refuses the call, nothing sent.
func (r *Router) intent(ctx context.Context, e audit.Event) error {
	if r.audit == nil {
		return nil
	}
	e.Outcome = audit.OutcomeInFlight
	e.Node = r.node
	if err := r.commit(ctx, e); err != nil {
		r.log.ErrorContext(ctx, "audit row of a tool call in flight not committed", "tool", e.Tool, "err", err)
		return &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: auditRetry, Err: err,
			Message: fmt.Sprintf("the audit log could not record the call before it ran (its database is slow or down), so nothing was sent; retry in %d s", int(auditRetry/time.Second))}
	}
	return nil
}

// record completes the call's audit row e with its outcome and, when the recorder can,
// waits until it is committed: the error says it could not be.
func (r *Router) record(ctx context.Context, e audit.Event, upstream int, err error) error {
	if r.audit == nil {
		return nil
	}
	outcome := "ok"
	if err != nil {
		outcome = string(switchboard.CodeOf(err))
		if outcome == string(switchboard.CodeInternal) && errors.Is(ctx.Err(), context.Canceled) {
			outcome = string(switchboard.CodeCanceled) // the caller went away meanwhile
		}
		var ue *providers.UpstreamError
		if errors.As(err, &ue) && upstream == 0 {
			upstream = ue.Status
		}
	}
	e.Outcome = outcome
	e.UpstreamStatus = upstream
	e.LatencyMicros = r.now().Sub(e.At).Microseconds()
	e.Detail = auditDetail(ctx) // with what the tool noted while it ran (NoteAudit)
	if cerr := r.commit(ctx, e); cerr != nil {
		r.log.ErrorContext(ctx, "audit row of a tool call not committed", "tool", e.Tool, "err", cerr)
		return cerr
	}
	return nil
}

// commit writes e and, when the recorder can say so, waits until it is committed.
func (r *Router) commit(ctx context.Context, e audit.Event) error {
	c, ok := r.audit.(committer)
	if !ok {
		r.audit.Record(e)
		return nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditWait)
	defer cancel()
	// The wait for the commit is the database's, not the hub's: the call's place goes
	// to another call meanwhile, which joins the same group commit.
	slot := limits.SlotFrom(ctx)
	slot.Pause()
	err := c.Commit(wctx, e)
	slot.Resume()
	return err
}

// needsReconnect marks a connection whose credentials the provider refused, so its
// status says so and later calls fail without reaching the provider.
func (r *Router) needsReconnect(ctx context.Context, p switchboard.Principal, c *connections.Connection) {
	r.pool.forget(c.ID)
	if err := r.conns.MarkNeedsReconnect(context.WithoutCancel(ctx), p, c.ID, c.Version); err != nil {
		r.log.ErrorContext(ctx, "mark connection needs_reconnect", "connection", c.ID, "err", err)
	}
}

// Forget drops the cached client of a connection (of every connection when
// connectionID is empty, after a gap in the change feed); wire it to connection changes.
func (r *Router) Forget(_ switchboard.TenantID, connectionID string) {
	if connectionID == "" {
		r.pool.forgetAll()
		return
	}
	r.pool.forget(connectionID)
}

// errPrivateForAgent refuses an agent's call on a private connection it may not use now.
var errPrivateForAgent = &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this tool is bound to a private connection, " +
	"which runs through an agent only when its owner created the agent, saved it last and created the calling key; " +
	"ask the connection's owner to save the agent (and create its key) again"}

// connectionUser is the principal whose connections p's call may run on: p itself for
// a user; for an agent's key, p with UserID set to the user whose private connections
// the agent may use now ("" for none: shared connections only).
func (r *Router) connectionUser(ctx context.Context, p switchboard.Principal) (switchboard.Principal, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return p, nil
	}
	q := p
	q.UserID = ""
	if r.agents == nil {
		return q, nil
	}
	user, err := r.agents.PrivateUser(ctx, p)
	if err != nil {
		return switchboard.Principal{}, err
	}
	q.UserID = user
	return q, nil
}
