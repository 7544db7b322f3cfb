package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// errDraining refuses a call that arrives while the node shuts down: another node
// takes it.
var errDraining = &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: time.Second,
	Message: "this server is shutting down; nothing was run; retry in 1 s (another server will take the call)"}

// errCut is the cause of a call stopped by Cut.
var errCut = errors.New("the node's drain ended with the call under way")

// errCutUnsent answers a call Cut stopped before it sent anything that changes anything.
var errCutUnsent = &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: time.Second,
	Message: "this server shut down before the call finished; nothing that changes anything was sent; retry in 1 s (another server will take the call)"}

// Cut stops the calls still under way (call it once Drain gave up): each is answered,
// outcome_unknown when it had sent a request that changes something, and its audit
// row completed so. Wait for them with Drain again.
func (r *Router) Cut() {
	r.draining.Store(true)
	r.cutAll(errCut)
}

// Draining reports whether Drain was called: the node is shutting down.
func (r *Router) Draining() bool { return r.draining.Load() }

// Drain refuses new calls from now on and waits until every call under way has
// finished (its answer and audit row included), or ctx ends.
func (r *Router) Drain(ctx context.Context) error {
	r.draining.Store(true)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for r.active.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("drain: %d tool calls still running: %w", r.active.Load(), ctx.Err())
		}
	}
	return nil
}
