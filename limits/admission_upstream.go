package limits

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// upstreamGate is one upstream's part of the admission: the calls away at it (waiting
// for its answer) and those waiting to go while UpstreamAdmitted are.
type upstreamGate struct {
	away  int
	queue []*waiter
}

// Away gives the call's place back, and its room among MaxAdmitted, while it waits
// for the answer of the upstream named (its host); Resume ends it. A call waiting
// for an upstream costs the node a parked goroutine and a connection, not its own
// work, so a slow upstream does not keep the calls to other upstreams at the door: it
// holds UpstreamAdmitted calls at most. A call beyond them waits, without a place
// and outside MaxAdmitted, for one of them to come back, up to MaxWait and as many as
// UpstreamAdmitted; else it is refused (unavailable, with RetryAfter, saying nothing
// was sent), ctx's error if it ends first, and the slot is held again. A slot not
// held (nil, paused or released) goes away unbounded and uncounted.
func (s *Slot) Away(ctx context.Context, upstream string) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return nil
	}
	a := s.a
	a.mu.Lock()
	g := a.gates[upstream]
	if g == nil {
		g = &upstreamGate{}
		a.gates[upstream] = g
	}
	if g.away < a.opts.UpstreamAdmitted && len(g.queue) == 0 {
		g.away++
		a.leave(s)
		s.away = upstream
		a.mu.Unlock()
		return nil
	}
	if len(g.queue) >= a.opts.UpstreamAdmitted {
		a.mu.Unlock()
		return a.refuseUpstream(upstream, "queue_full")
	}
	w := &waiter{ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	a.leave(s)
	a.mu.Unlock()

	timer := time.NewTimer(a.opts.MaxWait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		s.away = upstream
		return nil
	case <-timer.C:
		err = a.refuseUpstream(upstream, "wait_exceeded")
	case <-ctx.Done():
		err = ctx.Err()
	}
	a.mu.Lock()
	if w.granted { // its turn came as the wait ended: give it on
		a.back(upstream)
	} else {
		for i, x := range g.queue {
			if x == w {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				break
			}
		}
		a.forgetGate(upstream, g)
		a.admitted++
	}
	s.retake()
	return err
}

// leave gives s's place and its room among MaxAdmitted back, for Away; the call stays
// its tenant's (under). a.mu is held.
func (a *Admission) leave(s *Slot) {
	s.held = false
	a.give(s.tenant)
	a.admitted--
	a.dispatch()
}

// back counts a call away at upstream as under way in the node again, and gives its
// turn at the upstream to the first call waiting for one. a.mu is held.
func (a *Admission) back(upstream string) {
	a.admitted++
	g := a.gates[upstream]
	if len(g.queue) > 0 {
		w := g.queue[0]
		g.queue = g.queue[1:]
		w.granted = true
		close(w.ready)
		return
	}
	g.away--
	a.forgetGate(upstream, g)
}

// forgetGate drops an upstream with no call away at it nor waiting. a.mu is held.
func (a *Admission) forgetGate(upstream string, g *upstreamGate) {
	if g.away == 0 && len(g.queue) == 0 {
		delete(a.gates, upstream)
	}
}

// refuseUpstream is the error of a call refused at its upstream's gate, counted.
func (a *Admission) refuseUpstream(upstream, reason string) error {
	if a.opts.Refused != nil {
		a.opts.Refused("upstream", reason)
	}
	why := "as many more wait to go"
	if reason == "wait_exceeded" {
		why = "none came back in time"
	}
	secs := int((a.opts.RetryAfter + time.Second - 1) / time.Second)
	return &switchboard.Error{Code: switchboard.CodeUnavailable, RetryAfter: a.opts.RetryAfter,
		Message: fmt.Sprintf("this server has %d requests waiting for %s's answers, as many as it allows, and %s; nothing was sent; retry in %d s",
			a.opts.UpstreamAdmitted, upstream, why, secs)}
}
