package router

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/providers"
)

// The confirm policies: which tool calls a person must confirm before they run.
const (
	ConfirmNever       = "never"
	ConfirmDestructive = "destructive"
	ConfirmAlways      = "always"
)

// The approval modes: who may give a confirmation.
const (
	// ApprovalRelay accepts the MCP client's confirmation form, the agent relaying the
	// person's answer (switchboard_submit_elicitation), and the approval page.
	ApprovalRelay = "relay"
	// ApprovalPerson accepts only a signed-in person on the approval page.
	ApprovalPerson = "person"
)

// Policy is how a principal's tool calls are confirmed.
type Policy struct {
	Confirm  string // never, destructive or always
	Approval string // relay or person
}

// Policies supplies the policy of a principal: its agent's, or its tenant's (the
// agents service).
type Policies interface {
	Policy(ctx context.Context, p switchboard.Principal) (Policy, error)
}

// Policy returns the principal's confirm policy; without Policies every call runs
// unconfirmed (never, relay).
func (r *Router) Policy(ctx context.Context, p switchboard.Principal) (Policy, error) {
	if r.policies == nil {
		return Policy{Confirm: ConfirmNever, Approval: ApprovalRelay}, nil
	}
	pol, err := r.policies.Policy(ctx, p)
	if err != nil {
		return Policy{}, r.internal(ctx, err, "read the confirm policy of %s", p.ID())
	}
	if pol.Approval == "" {
		pol.Approval = ApprovalRelay
	}
	return pol, nil
}

// Covers reports whether the policy says a person must confirm a call of the tool
// before it runs.
func (pol Policy) Covers(tool *providers.Tool) bool {
	if tool.Provider != nil && tool.Provider.ConfirmsItself {
		return false
	}
	switch pol.Confirm {
	case ConfirmAlways:
		return true
	case ConfirmDestructive:
		return tool.Info.Hints.Destructive
	default:
		return false
	}
}

// confirmationRequired is the refusal of a call that needed a confirmation it did not
// carry: a REST call, or a caller that skipped the confirmation.
func confirmationRequired(tool string) error {
	return &switchboard.Error{Code: switchboard.CodeConfirmationRequired, Message: fmt.Sprintf(
		"%s needs a person's confirmation under this caller's confirm policy, so it was not run; start it as a run (POST /api/runs, or switchboard_run_async), which waits for the confirmation on its approval page", tool)}
}

// The audit kinds of a confirmation's life.
const (
	KindConfirmationAsked    audit.Kind = "confirmation_asked"
	KindConfirmationAccepted audit.Kind = "confirmation_accepted"
	KindConfirmationDeclined audit.Kind = "confirmation_declined"
	KindConfirmationTimedOut audit.Kind = "confirmation_timed_out"
)

// Confirmation is one step of a confirmation for the audit log: asked, accepted,
// declined or timed out, who took it (the approver for an answer), and how.
type Confirmation struct {
	Kind      audit.Kind
	Principal switchboard.Principal // who asked or answered
	Tool      string
	// ConnectionID is the connection the call runs on.
	ConnectionID string
	// Detail says how: "client form", "relay", "approval page", and the run's id.
	Detail string
}

// RecordConfirmation leaves the audit row of one step of a confirmation.
func (r *Router) RecordConfirmation(c Confirmation) {
	if r.audit == nil {
		return
	}
	r.audit.Record(audit.Event{
		TenantID: c.Principal.TenantID, At: r.now(), Kind: c.Kind, Principal: c.Principal.ID(), KeyID: c.Principal.KeyID,
		Tool: c.Tool, ConnectionID: c.ConnectionID, Outcome: "ok", Detail: c.Detail,
	})
}

// Refused leaves the audit row of a call refused before it reached the router (its
// arguments could not even be read), so every call of a tool leaves one row.
func (r *Router) Refused(p switchboard.Principal, req Request, err error) {
	ctx := context.Background()
	r.record(ctx, r.event(ctx, "", p, req, r.now()), 0, err)
}

// Ran records the audit row of a call that ran without Execute, from start until now:
// a saved workflow's run started as a run, which the workflows engine executes step by
// step (each step audited as a call of its own).
func (r *Router) Ran(ctx context.Context, p switchboard.Principal, req Request, start time.Time, err error) {
	ctx = context.WithoutCancel(ctx)
	r.record(ctx, r.event(ctx, auditID(ctx), p, req, start), 0, err)
}
