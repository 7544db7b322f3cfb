package runs

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
)

// Pause is the error a Runner returns when its run cannot go on until a person gives
// it data (a workflow's step that asks them): the run is parked input_required,
// holding no slot and no lease, until Resume runs it again. It is no failure.
type Pause struct {
	// Message says what the run waits for; it is kept as the run's elicitation message.
	Message string
}

func (p *Pause) Error() string { return "the run waits for a person's input: " + p.Message }

// Paused reports whether a run is parked by its Runner for a person's input (Pause),
// rather than waiting for the confirmation it was started with: nothing moves it on
// but Resume (or a cancel), and no confirmation deadline ends it.
func (v View) Paused() bool {
	return v.State == StateInputRequired && v.Elicitation != nil && v.Elicitation.ExpiresAt == nil
}

// paused reports whether the run is parked for a person's input.
func (r *Run) paused() bool {
	return r.State == StateInputRequired && r.ElicitationMessage != "" && r.ElicitationExpiresAt == nil
}

// park records that a working run this process holds waits for a person's input: it
// leaves the lease and keeps its confirmation's answer, so it runs as confirmed when
// resumed.
func (s *Store) park(ctx context.Context, tenant switchboard.TenantID, id, owner, message string) (bool, error) {
	return s.update(ctx, tenant, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("state = ? AND lease_owner = ?", StateWorking, owner)
	}, withoutInputRequests(map[string]any{"state": StateInputRequired, "elicitation_message": clip(message), "elicitation_expires_at": nil, "lease_until": nil}))
}

// unpark moves one of the principal's parked runs back to working under this
// process's lease.
func (s *Store) unpark(ctx context.Context, p switchboard.Principal, id, owner string, until any) (bool, error) {
	return s.update(ctx, p.TenantID, id, func(q *gorm.DB) *gorm.DB {
		return q.Where("principal = ? AND state = ? AND elicitation_expires_at IS NULL", p.ID(), StateInputRequired)
	}, map[string]any{"state": StateWorking, "lease_owner": owner, "lease_until": until})
}

// paused parks a run whose Runner answered Pause; it reports whether err was one.
func (e *Executor) paused(ctx context.Context, r Run, err error) bool {
	var pz *Pause
	if !errors.As(err, &pz) {
		return false
	}
	ok, perr := e.store.park(ctx, r.TenantID, r.ID, e.o.Node, pz.Message)
	switch {
	case perr != nil:
		e.log.Error("park run", "run", r.ID, "err", perr)
	case !ok:
		e.log.Info("run changed while it paused (canceled or taken over)", "run", r.ID)
	}
	return true
}

// Resume runs again one of the principal's runs that its Runner parked for a
// person's input (Pause), once the input is recorded where the Runner finds it. A run
// that is not parked is a conflict.
func (e *Executor) Resume(ctx context.Context, p switchboard.Principal, id string) (View, error) {
	r, err := e.store.Get(ctx, p, id)
	if err != nil {
		return View{}, err
	}
	if !r.paused() {
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s is %s, not waiting for a person's input", id, r.State)
	}
	if err := e.hold(id, p.TenantID); err != nil {
		return View{}, err
	}
	ok, err := e.store.unpark(ctx, p, id, e.o.Node, e.store.now().Add(e.o.Lease))
	if err != nil || !ok {
		e.release(id, p.TenantID)
		if err != nil {
			return View{}, err
		}
		return View{}, switchboard.Errorf(switchboard.CodeConflict, "run %s changed meanwhile; read it again", id)
	}
	run, err := e.store.Get(ctx, p, id)
	if err != nil {
		e.release(id, p.TenantID)
		return View{}, fmt.Errorf("read resumed run %s: %w", id, err)
	}
	e.dispatch(run, false)
	return run.view(nil), nil
}

// Owner returns the principal one of the runs p may answer on its approval page runs
// as (the person who started it, or their agent): what answers a question the run
// paused for are given as. Anyone else gets not_found.
func (e *Executor) Owner(ctx context.Context, p switchboard.Principal, id string) (switchboard.Principal, error) {
	r, _, err := e.approverOf(ctx, p, id)
	if err != nil {
		return switchboard.Principal{}, err
	}
	return r.principal(), nil
}
