package limits

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// upstreamGate is one upstream's part of the admission: its calls away (waiting for
// its answer), oldest first, and the calls waiting to go while UpstreamAdmitted are
// away.
type upstreamGate struct {
	away       int // the calls from head to tail
	head, tail *Slot
	young      *Slot // the oldest call away not yet slow; those before it are
	queue      []*waiter
}

// slow reports whether a call has waited for the upstream longer than UpstreamSlow.
func (g *upstreamGate) slow() bool { return g.head != nil && g.head.slow }

// push adds s, gone at now, as the newest call away.
func (g *upstreamGate) push(s *Slot, now time.Time) {
	s.went, s.slow, s.prev, s.next = now, false, g.tail, nil
	if g.tail != nil {
		g.tail.next = s
	} else {
		g.head = s
	}
	g.tail = s
	g.away++
	if g.young == nil {
		g.young = s
	}
}

// unlink takes s out of the calls away.
func (g *upstreamGate) unlink(s *Slot) {
	if g.young == s {
		g.young = s.next
	}
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		g.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		g.tail = s.prev
	}
	s.prev, s.next = nil, nil
	g.away--
}

// Away gives the call's place back while it waits for the answer of the upstream
// named (its host); Resume ends it. Unlike Pause, it counts the call at its upstream:
// UpstreamAdmitted calls at most are away at one upstream, and one that has been away
// longer than UpstreamSlow no longer counts among MaxAdmitted, so a slow upstream
// keeps the calls to other upstreams at the door for UpstreamSlow at most. A call
// beyond UpstreamAdmitted waits, without a place, for one of them to come back, up to
// MaxWait and as many as UpstreamAdmitted; else it is refused (unavailable, with
// RetryAfter, saying nothing was sent): at once while the upstream is slow, or ctx's
// error if it ends first, and its slot is held again. A slot not held (nil, paused
// or released) goes away unbounded and uncounted.
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
	now := a.now()
	g := a.gates[upstream]
	if g == nil {
		g = &upstreamGate{}
		a.gates[upstream] = g
	}
	if g.away < a.opts.UpstreamAdmitted && len(g.queue) == 0 {
		a.goAway(g, s, upstream, now)
		s.held = false
		a.give(s.tenant)
		a.dispatch()
		a.mu.Unlock()
		return nil
	}
	a.age(now)
	if g.slow() || len(g.queue) >= a.opts.UpstreamAdmitted {
		reason := "queue_full"
		if g.slow() {
			reason = "slow"
		}
		a.mu.Unlock()
		return a.refuseUpstream(upstream, reason)
	}
	w := &waiter{ready: make(chan struct{}), slot: s}
	g.queue = append(g.queue, w)
	s.held = false
	a.give(s.tenant)
	a.dispatch()
	a.mu.Unlock()

	err := a.wait(ctx, w)
	if err == nil {
		return nil // back passed its turn on, and s is away
	}
	if errors.Is(err, errWaitExceeded) {
		err = a.refuseUpstream(upstream, "wait_exceeded")
	}
	a.mu.Lock()
	if w.granted { // its turn came as the wait ended: give it on
		a.back(s)
	} else {
		for i, x := range g.queue {
			if x == w {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				break
			}
		}
		a.forgetGate(upstream, g)
	}
	s.retake()
	return err
}

// goAway counts s, gone at now, among the calls away at the upstream of gate g, and
// among its tenant's calls away in time. a.mu is held.
func (a *Admission) goAway(g *upstreamGate, s *Slot, upstream string, now time.Time) {
	g.push(s, now)
	s.away = upstream
	a.awayOf[s.tenant]++
}

// unaway stops counting a call of the tenant among its calls away in time: back, or
// slow. a.mu is held.
func (a *Admission) unaway(tenant switchboard.TenantID) {
	if a.awayOf[tenant]--; a.awayOf[tenant] <= 0 {
		delete(a.awayOf, tenant)
	}
}

// back ends s's time away: it counts among MaxAdmitted again if it had stopped, and
// its turn at the upstream goes to the first call waiting for one. a.mu is held.
func (a *Admission) back(s *Slot) {
	upstream := s.away
	g := a.gates[upstream]
	g.unlink(s)
	if s.slow {
		a.admitted++
	} else {
		a.unaway(s.tenant)
	}
	s.away, s.slow = "", false
	if len(g.queue) > 0 {
		w := g.queue[0]
		g.queue = g.queue[1:]
		a.goAway(g, w.slot, upstream, a.now())
		w.granted = true
		close(w.ready)
		return
	}
	a.forgetGate(upstream, g)
}

// age marks the calls away longer than UpstreamSlow as slow, out of MaxAdmitted.
// a.mu is held.
func (a *Admission) age(now time.Time) {
	for _, g := range a.gates {
		for g.young != nil && now.Sub(g.young.went) >= a.opts.UpstreamSlow {
			g.young.slow = true
			a.admitted--
			a.unaway(g.young.tenant)
			g.young = g.young.next
		}
	}
}

// ageLater sets a timer to dispatch when the oldest call away not yet slow turns slow:
// new calls wait at the door for room that it will then give. a.mu is held.
func (a *Admission) ageLater() {
	var at time.Time
	for _, g := range a.gates {
		if g.young != nil && (at.IsZero() || g.young.went.Before(at)) {
			at = g.young.went
		}
	}
	if at.IsZero() {
		return
	}
	at = at.Add(a.opts.UpstreamSlow)
	if a.aging != nil && !a.agingAt.After(at) {
		return // set to fire sooner
	}
	if a.aging != nil {
		a.aging.Stop()
	}
	a.agingAt = at
	a.aging = time.AfterFunc(at.Sub(a.now()), func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.aging = nil
		a.dispatch()
	})
}

// forgetGate drops an upstream with no call away at it nor waiting. a.mu is held.
func (a *Admission) forgetGate(upstream string, g *upstreamGate) {
	if g.away == 0 && len(g.queue) == 0 {
		delete(a.gates, upstream)
	}
}

// refuseUpstream is the error of a call refused at its upstream's gate, counted.
func (a *Admission) refuseUpstream(upstream, reason string) error {
	why := "as many more wait to go" // queue_full
	switch reason {
	case "slow":
		why = fmt.Sprintf("it has not answered the oldest for over %s", a.opts.UpstreamSlow)
	case "wait_exceeded":
		why = "none came back in time"
	}
	return a.refusal("upstream", reason, switchboard.CodeUnavailable,
		fmt.Sprintf("this server has %d requests waiting for %s's answers, as many as it allows, and %s; nothing was sent",
			a.opts.UpstreamAdmitted, upstream, why))
}
