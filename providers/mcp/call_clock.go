package mcp

import (
	"context"
	"sync"
	"time"
)

// callClock bounds a remote call by the service's timeout, without the time a request
// the remote server relayed to the calling client waits for its answer (a person
// filling a form, a model sampling): the timeout is the hub's bound on the remote
// server; the wait is the caller's, and ends with the caller's call.
type callClock struct {
	mu    sync.Mutex
	timer *time.Timer
	left  time.Duration // what remains of the timeout
	since time.Time     // when the timer last started
	waits int           // relayed requests waiting for the caller
	fired bool
}

type callClockKey struct{}

// withCallClock returns ctx ending after d of the call's own time (see waitForCaller).
func withCallClock(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	c := &callClock{left: d, since: time.Now()}
	c.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		c.fired = true
		c.mu.Unlock()
		cancel(context.DeadlineExceeded)
	})
	return context.WithValue(ctx, callClockKey{}, c), func() {
		c.timer.Stop()
		cancel(context.Canceled)
	}
}

// waitForCaller stops the clock of ctx's call until the returned function is called.
func waitForCaller(ctx context.Context) func() {
	c, _ := ctx.Value(callClockKey{}).(*callClock)
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waits == 0 && !c.fired && c.timer.Stop() {
		c.left -= time.Since(c.since)
	}
	c.waits++
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.waits--
		if c.waits == 0 && !c.fired {
			c.since = time.Now()
			c.timer.Reset(max(c.left, 0))
		}
	})
}
