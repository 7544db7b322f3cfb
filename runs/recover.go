package runs

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
)

// recoverBatch bounds the runs one recovery pass takes over.
const recoverBatch = 100

// Run does the executor's background work until ctx ends: it recovers runs whose
// process died at once, then every third of a lease renews the leases of this
// process's runs, recovers again, fails confirmations that were not given in time, and
// deletes runs that ended longer ago than the retention.
func (e *Executor) Run(ctx context.Context) {
	e.tick(ctx)
	t := time.NewTicker(e.o.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.stop:
			return
		case <-t.C:
			e.tick(ctx)
		}
	}
}

func (e *Executor) tick(ctx context.Context) {
	e.renewLeases(ctx)
	if err := e.Recover(ctx); err != nil {
		e.log.Error("recover runs", "err", err)
	}
	expired, err := e.store.expireElicitations(ctx, e.store.now(), recoverBatch)
	if err != nil {
		e.log.Error("expire run confirmations", "err", err)
	}
	for i := range expired {
		r := &expired[i]
		e.confirmation(router.KindConfirmationTimedOut, r.principal(), r, "run "+r.ID+": nobody answered in time")
	}
	if len(expired) > 0 {
		e.log.Info("runs failed for want of a confirmation", "count", len(expired))
	}
	if n, err := e.store.purge(ctx, e.store.now().Add(-e.o.Retention)); err != nil {
		e.log.Error("purge old runs", "err", err)
	} else if n > 0 {
		e.log.Info("old runs deleted", "count", n)
	}
}

// renewLeases extends the lease of every run this process holds; a run that is no
// longer this process's (canceled through another process) is stopped here.
func (e *Executor) renewLeases(ctx context.Context) {
	type heldRun struct {
		tenant switchboard.TenantID
		cancel context.CancelFunc
	}
	e.mu.Lock()
	held := make(map[string]heldRun, len(e.local))
	for id, lr := range e.local {
		held[id] = heldRun{tenant: lr.tenant, cancel: lr.cancel}
	}
	e.mu.Unlock()
	until := e.store.now().Add(e.o.Lease)
	for id, h := range held {
		ok, err := e.store.renew(ctx, h.tenant, id, e.o.Node, until)
		if err != nil {
			e.log.Error("renew run lease", "run", id, "err", err)
			continue
		}
		if !ok && h.cancel != nil {
			h.cancel()
		}
	}
}

// Recover takes over working runs whose lease ran out (their process died): a run that
// never started, or whose operation may run twice (read-only or idempotent), runs
// again here; any other is marked failed with the reason, since running it again could
// repeat its effect.
func (e *Executor) Recover(ctx context.Context) error {
	now := e.store.now()
	rs, err := e.store.expiredLeases(ctx, now, recoverBatch)
	if err != nil {
		return err
	}
	for i := range rs {
		r := rs[i]
		if r.Attempts > 0 && !r.Resumable {
			e.failAbandoned(ctx, r, now)
			continue
		}
		if err := e.hold(r.ID, r.TenantID); err != nil {
			continue // the tenant's bound is full here; a later pass or another process takes it
		}
		ok, err := e.store.takeOver(ctx, &r, e.o.Node, now.Add(e.o.Lease), now)
		if err != nil || !ok {
			e.release(r.ID, r.TenantID)
			if err != nil {
				e.log.Error("take over run", "run", r.ID, "err", err)
			}
			continue
		}
		r.LeaseOwner = e.o.Node
		e.log.Info("resuming run", "run", r.ID, "tenant", r.TenantID, "tool", r.Tool, "attempts", r.Attempts)
		e.dispatch(r, false)
	}
	return nil
}

// failAbandoned fails a run that was executing when its process died and whose
// operation must not run twice.
func (e *Executor) failAbandoned(ctx context.Context, r Run, now time.Time) {
	ok, err := e.store.takeOver(ctx, &r, e.o.Node, now.Add(e.o.Lease), now)
	if err != nil || !ok {
		if err != nil {
			e.log.Error("take over run", "run", r.ID, "err", err)
		}
		return
	}
	msg := fmt.Sprintf("Switchboard stopped while this run was executing, and %s is not idempotent, so it was not run again: check whether it took effect before starting it again", r.Tool)
	if _, err := e.store.fail(ctx, r.TenantID, r.ID, e.o.Node, "interrupted", msg); err != nil {
		e.log.Error("fail interrupted run", "run", r.ID, "err", err)
		return
	}
	e.log.Info("run interrupted by a restart marked failed", "run", r.ID, "tenant", r.TenantID, "tool", r.Tool)
}

// Close stops taking runs and waits, until ctx ends, for the executing ones to finish.
// Runs still waiting or executing then are left to their lease: when it runs out, a
// process recovers them.
func (e *Executor) Close(ctx context.Context) {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.stop)
	}
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		e.mu.Lock()
		for _, lr := range e.local {
			if lr.cancel != nil {
				lr.cancel()
			}
		}
		e.mu.Unlock()
		<-done
	}
}
