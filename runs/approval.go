package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
)

// Connections is what the approval page needs of the connection service: a
// connection the approver may see, so the executor can tell whether they may use it.
type Connections interface {
	Get(ctx context.Context, p switchboard.Principal, id string) (connections.Connection, error)
}

// Approval is a run's confirmation as its approval page shows it: what will run, for
// whom, and where the confirmation stands.
type Approval struct {
	RunID        string
	Tool         string
	ConnectionID string
	// Account is the connection's account label.
	Account string
	// Requester is who started the run: "agent:…" or "user:…".
	Requester string
	Message   string
	// Arguments are the call's arguments (opened from the sealed input), for the
	// person to see what they approve; only one approval is read with them.
	Arguments string
	State     State
	// Action is the answer given (accept, decline, cancel), once given.
	Action string
	// Error is why the run failed or was canceled, once it has.
	Error     string
	ExpiresAt *time.Time
	CreatedAt time.Time
}

// approverOf checks that p is a person who may answer the run's confirmation: a
// signed-in user (not an agent's key) of the run's tenant who may use the run's
// connection. Anyone else gets not_found, the same as for a run that does not exist.
func (e *Executor) approverOf(ctx context.Context, p switchboard.Principal, id string) (Run, connections.Connection, error) {
	if p.Kind != switchboard.PrincipalUser || p.UserID == "" {
		return Run{}, connections.Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a signed-in person approves a run, not an agent's key")
	}
	if e.o.Connections == nil {
		return Run{}, connections.Connection{}, switchboard.NotFound("run")
	}
	r, err := e.store.get(ctx, p.TenantID, id)
	if err != nil {
		return Run{}, connections.Connection{}, err
	}
	if r.ElicitationMessage == "" {
		return Run{}, connections.Connection{}, switchboard.NotFound("run") // never asked for a confirmation
	}
	if r.ConnectionID == "" {
		// A run on no connection of its own (a workflow's, whose steps name theirs) is
		// its person's to approve: the one who started it, or whose agent did.
		if !ownRun(p, &r) {
			return Run{}, connections.Connection{}, switchboard.NotFound("run")
		}
		return r, connections.Connection{}, nil
	}
	c, err := e.o.Connections.Get(ctx, p, r.ConnectionID)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return Run{}, connections.Connection{}, switchboard.NotFound("run")
		}
		return Run{}, connections.Connection{}, err
	}
	if !c.UsableBy(p) {
		return Run{}, connections.Connection{}, switchboard.NotFound("run")
	}
	return r, c, nil
}

// Approval returns a run's confirmation for its approval page, with the call's
// arguments, if p may answer it.
func (e *Executor) Approval(ctx context.Context, p switchboard.Principal, id string) (Approval, error) {
	r, c, err := e.approverOf(ctx, p, id)
	if err != nil {
		return Approval{}, err
	}
	a := approvalOf(&r, c.AccountLabel)
	input, err := e.store.input(ctx, &r)
	if err != nil {
		return Approval{}, switchboard.Internal(fmt.Errorf("open the input of run %s: %w", id, err))
	}
	a.Arguments = string(input) // whole: the person approves every argument, not the start of them
	clear(input)
	return a, nil
}

// Approve applies a person's answer, given on the run's approval page, to a run that
// waits for its confirmation: accept starts it, decline ends it without running
// anything. It is the one way to confirm a run whose principal's policy says approval:
// person.
func (e *Executor) Approve(ctx context.Context, approver switchboard.Principal, id, action string) (Approval, error) {
	switch action {
	case "accept", "decline":
	default:
		return Approval{}, switchboard.Invalid("action", "must be accept or decline")
	}
	r, c, err := e.approverOf(ctx, approver, id)
	if err != nil {
		return Approval{}, err
	}
	if _, err := e.answer(ctx, r.principal(), &r, approver, action, "approval page"); err != nil {
		return Approval{}, err
	}
	r, err = e.store.get(ctx, approver.TenantID, id)
	if err != nil {
		return Approval{}, err
	}
	return approvalOf(&r, c.AccountLabel), nil
}

// Pending lists the runs of p's tenant that wait for a confirmation p may give, oldest
// first (at most 100).
func (e *Executor) Pending(ctx context.Context, p switchboard.Principal) ([]Approval, error) {
	if p.Kind != switchboard.PrincipalUser || p.UserID == "" || e.o.Connections == nil {
		return nil, nil
	}
	rs, err := e.store.waiting(ctx, p.TenantID, 100)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	var out []Approval
	for i := range rs {
		if rs[i].ConnectionID == "" {
			if ownRun(p, &rs[i]) {
				out = append(out, approvalOf(&rs[i], ""))
			}
			continue
		}
		label, seen := labels[rs[i].ConnectionID]
		if !seen {
			c, err := e.o.Connections.Get(ctx, p, rs[i].ConnectionID)
			switch {
			case err == nil && c.UsableBy(p):
				label = c.AccountLabel
			case err == nil || switchboard.CodeOf(err) == switchboard.CodeNotFound:
				label = "\x00" // not theirs to approve
			default:
				return nil, err
			}
			labels[rs[i].ConnectionID] = label
		}
		if label != "\x00" {
			out = append(out, approvalOf(&rs[i], label))
		}
	}
	return out, nil
}

// ownRun reports whether the run belongs to the person p: they started it, or an agent
// of theirs did.
func ownRun(p switchboard.Principal, r *Run) bool {
	return r.UserID != "" && r.UserID == p.UserID
}

// linked adds the approval page's address to a view of a run that waits for its
// confirmation.
func (e *Executor) linked(v View) View {
	if v.State == StateInputRequired && e.o.ApprovalURL != nil {
		v.ApprovalURL = e.o.ApprovalURL(v.ID)
	}
	return v
}

func approvalOf(r *Run, account string) Approval {
	return Approval{
		RunID: r.ID, Tool: r.Tool, ConnectionID: r.ConnectionID, Account: account, Requester: r.Principal,
		Message: r.ElicitationMessage, State: r.State, Action: r.ElicitationAction, Error: r.ErrorMessage, ExpiresAt: r.ElicitationExpiresAt, CreatedAt: r.CreatedAt,
	}
}

// waiting lists the tenant's runs that wait for a confirmation, not yet expired, or
// for a person's input, oldest first.
func (s *Store) waiting(ctx context.Context, tenant switchboard.TenantID, limit int) ([]Run, error) {
	var rs []Run
	// Runs paused for a person's input (no deadline) wait for them too.
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND state = ? AND (elicitation_expires_at > ? OR (elicitation_expires_at IS NULL AND elicitation_message <> ''))", tenant, StateInputRequired, s.now()).
		Order("created_at, id").Limit(limit).Find(&rs).Error
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list runs waiting for a confirmation: %w", err))
	}
	return rs, nil
}
