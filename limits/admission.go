package limits

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// AdmissionOptions bound the tool calls a node works on at once; zero values take
// the defaults.
type AdmissionOptions struct {
	// MaxInFlight is how many calls the node works on at once; default four per CPU
	// (at least 8). A call waiting for its upstream's answer does not count: it gives
	// its place back for that time (see Slot), so the bound is on the hub's own work,
	// which is what overloads it, and slow upstreams do not starve fast ones.
	MaxInFlight int
	// MaxAdmitted bounds the calls admitted and not yet done, node-wide, whether they
	// hold a place or wait for one, for their upstream or for their audit commit;
	// default 32 × MaxInFlight. A call that has waited for its upstream longer than
	// UpstreamSlow no longer counts (see UpstreamAdmitted). A new call beyond it waits
	// for one to end, so a flood of callers waits at the door, for nothing but a parked
	// goroutine, instead of piling into the upstream's connections (each past the
	// pool's 256 idle ones is dialed and closed again) and the resume queue.
	MaxAdmitted int
	// UpstreamSlow is how long a call waits for its upstream's answer before it counts
	// as waiting for a slow upstream; default 1 s, or half MaxWait if less. Such a call
	// leaves MaxAdmitted (calls waiting at the door then come in), and while an
	// upstream has one, its calls beyond UpstreamAdmitted are refused at once.
	UpstreamSlow time.Duration
	// UpstreamAdmitted is how many calls may wait for one upstream's answer at once,
	// node-wide; default MaxAdmitted. One more waits its turn, without a place, up to
	// MaxWait and as many as UpstreamAdmitted; it is refused, before it sends anything,
	// when it would wait longer or as many wait already, or at once while the upstream
	// is slow. So a slow upstream holds this many calls and keeps the node's door for
	// UpstreamSlow at most: the calls to other upstreams still come in.
	UpstreamAdmitted int
	// TenantAdmitted is a tenant's part of the calls in the node: under way or
	// waiting, except those waiting for their upstream's answer (see Slot.Away) for
	// less than UpstreamSlow, which cost the node nothing until they come back. It
	// applies while the node is contended (a call had to wait for a place within the
	// last second) and another tenant is active (asked for a place within the last
	// second, or has calls under way or waiting); default 4 × MaxInFlight. A new call
	// of a tenant holding its part, with more calls in the node than every other
	// active tenant and having asked for more over the last second, is refused at once
	// as rate_limited, reason "over_part", rather than queued: a tenant flooding the
	// node keeps a few dozen calls in it, not MaxAdmitted, so other tenants' calls are
	// not scheduled behind its hundreds, nor refused at a slow upstream its calls
	// fill. Alone on the node, beside tenants as heavy as itself, while places are
	// free, or while its calls wait for an upstream answering in time, a tenant may
	// have up to MaxAdmitted under way. Set to MaxAdmitted or more, it is off: calls
	// beyond MaxAdmitted queue, whoever's they are.
	TenantAdmitted int
	// MaxQueue is how many calls may wait for a place, node-wide; default 4,096. More
	// are refused at once as unavailable.
	MaxQueue int
	// TenantQueue is how many calls of one tenant may wait; default 1,024. More are
	// refused at once as rate_limited, so one tenant's flood fills its own queue only.
	TenantQueue int
	// MaxWait is the longest a call waits for a place before it is refused; default 2 s.
	MaxWait time.Duration
	// RetryAfter is the wait a refusal advises; default 1 s.
	RetryAfter time.Duration
	// Refused, when set, is told of each refusal: scope "node" or "tenant", reason
	// "queue_full", "over_share" (see overShare), "over_part" (see TenantAdmitted) or
	// "wait_exceeded"; or scope "upstream", reason "queue_full", "slow" or
	// "wait_exceeded" (see UpstreamAdmitted).
	Refused func(scope, reason string)
}

// Admission is the node's admission control for tool calls. Places are handed out
// round-robin between tenants with calls waiting, so a tenant with a few calls is
// never stuck behind another tenant's thousands; excess calls are refused fast, with
// a Retry-After, instead of letting queues collapse. It is safe for concurrent use.
type Admission struct {
	opts     AdmissionOptions
	mu       sync.Mutex
	running  int
	admitted int                          // slots not yet released, except those away at a slow upstream
	under    map[switchboard.TenantID]int // slots not yet released, by tenant
	awayOf   map[switchboard.TenantID]int // slots away at an upstream, not yet slow (see Slot.Away), by tenant
	waiting  int                          // new calls waiting (MaxQueue bounds them)
	resuming int                          // calls back from their upstream waiting
	held     map[switchboard.TenantID]int // places held, by tenant
	tenants  map[switchboard.TenantID]*tenantQueue
	ring     []*tenantQueue // tenants with calls waiting, in round-robin order
	next     int
	now      func() time.Time
	asked    map[switchboard.TenantID]*demand // what each tenant asked for lately
	swept    time.Time                        // when tenants of asked no longer active were last dropped
	waited   time.Time                        // when a call last had to wait for a place
	gates    map[string]*upstreamGate         // the calls away at each upstream, and those waiting to go
	aging    *time.Timer                      // set to dispatch when the next call away turns slow (see ageLater)
	agingAt  time.Time                        // when aging fires
}

// activeFor is how long after its last call a tenant counts as active, for the
// other tenants' parts of the calls under way (see AdmissionOptions.TenantAdmitted).
const activeFor = time.Second

// tenantQueue is a tenant's calls waiting for a place: its calls back from their
// upstream go before its new ones, but not before other tenants' turns, so a tenant
// whose many calls return at once (a group commit's) does not hold up everyone else.
type tenantQueue struct {
	id      switchboard.TenantID
	resumes []*waiter
	waiters []*waiter
	inRing  bool
}

type waiter struct {
	ready   chan struct{}
	granted bool
	slot    *Slot // the call waiting to go to its upstream (upstreamGate's waiters)
}

// NewAdmission returns an Admission with these bounds.
func NewAdmission(o AdmissionOptions) *Admission {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = max(8, 4*runtime.GOMAXPROCS(0))
	}
	if o.MaxAdmitted <= 0 {
		o.MaxAdmitted = 32 * o.MaxInFlight
	}
	o.MaxAdmitted = max(o.MaxAdmitted, o.MaxInFlight)
	if o.UpstreamAdmitted <= 0 {
		o.UpstreamAdmitted = o.MaxAdmitted
	}
	if o.TenantAdmitted <= 0 {
		o.TenantAdmitted = 4 * o.MaxInFlight
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 4096
	}
	if o.TenantQueue <= 0 {
		o.TenantQueue = 1024
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 2 * time.Second
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Second
	}
	if o.UpstreamSlow <= 0 {
		o.UpstreamSlow = min(time.Second, o.MaxWait/2)
	}
	return &Admission{opts: o, tenants: map[switchboard.TenantID]*tenantQueue{}, held: map[switchboard.TenantID]int{},
		under: map[switchboard.TenantID]int{}, awayOf: map[switchboard.TenantID]int{}, now: time.Now, asked: map[switchboard.TenantID]*demand{},
		gates: map[string]*upstreamGate{}}
}

// Slot is a call's place; Release it when the call is done. Away and Resume give it
// back while the call waits for its upstream, Pause and Resume while it waits for
// something else outside the hub (its audit commit).
type Slot struct {
	a      *Admission
	tenant switchboard.TenantID
	mu     sync.Mutex
	held   bool
	closed bool
	away   string // the upstream whose answer the call waits for (see Away)
	// While away: when it went, whether it counts as waiting for a slow upstream, and
	// its neighbours in its upstream's calls away, oldest first.
	went       time.Time
	slow       bool
	prev, next *Slot
}

// Admit waits for a place for one of the tenant's calls. It returns an error with
// code rate_limited (the tenant's own queue is full, or it is over its share or its
// part beside other tenants) or unavailable (the node's is, or no place came within
// MaxWait), each with RetryAfter set; or ctx's error. On a nil Admission every call is
// admitted (with a nil Slot).
func (a *Admission) Admit(ctx context.Context, tenant switchboard.TenantID) (*Slot, error) {
	if a == nil {
		return nil, nil // no admission control: every call runs
	}
	a.mu.Lock()
	now := a.now()
	d := a.asked[tenant]
	if d == nil {
		d = &demand{start: now}
		a.asked[tenant] = d
	}
	d.ask(now)
	if a.overPart(tenant, now) {
		a.mu.Unlock()
		return nil, a.refuse("tenant", "over_part")
	}
	a.sweep(now)
	if a.admitted >= a.opts.MaxAdmitted {
		a.age(now) // calls away at a slow upstream give their room
	}
	if a.running < a.opts.MaxInFlight && a.admitted < a.opts.MaxAdmitted && a.waiting == 0 && a.resuming == 0 {
		a.take(tenant)
		a.admit(tenant)
		a.mu.Unlock()
		return &Slot{a: a, tenant: tenant, held: true}, nil
	}
	t := a.queueOf(tenant)
	if len(t.waiters) >= a.opts.TenantQueue {
		a.forget(t)
		a.mu.Unlock()
		return nil, a.refuse("tenant", "queue_full")
	}
	if a.overShare(t, now) {
		a.forget(t)
		a.mu.Unlock()
		return nil, a.refuse("tenant", "over_share")
	}
	if a.waiting >= a.opts.MaxQueue {
		a.forget(t)
		a.mu.Unlock()
		return nil, a.refuse("node", "queue_full")
	}
	w := &waiter{ready: make(chan struct{})}
	t.waiters = append(t.waiters, w)
	a.waiting++
	a.waited = now
	a.enqueue(t)
	a.dispatch()
	a.mu.Unlock()

	err := a.wait(ctx, w)
	if err == nil {
		return &Slot{a: a, tenant: tenant, held: true}, nil
	}
	if errors.Is(err, errWaitExceeded) {
		err = a.refuse("node", "wait_exceeded")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.granted { // the place came as the wait ended: give it on
		a.give(tenant)
		a.unadmit(tenant)
		a.dispatch()
		return nil, err
	}
	for i, x := range t.waiters {
		if x == w {
			t.waiters = append(t.waiters[:i], t.waiters[i+1:]...)
			a.waiting--
			break
		}
	}
	a.forget(t)
	return nil, err
}

// errWaitExceeded is wait's error when MaxWait passed.
var errWaitExceeded = errors.New("no turn came within MaxWait")

// wait waits for w's turn, for MaxWait at most: nil when it came, errWaitExceeded or
// ctx's error when it did not (it may still come after: see w.granted).
func (a *Admission) wait(ctx context.Context, w *waiter) error {
	timer := time.NewTimer(a.opts.MaxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return nil
	case <-timer.C:
		return errWaitExceeded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refusalReasons say why a call was refused, by scope/reason, in the words its caller
// reads (each distinct, so a client's logs, and the benchmarks, can tell them apart).
var refusalReasons = map[string]string{
	"tenant/queue_full":  "this tenant has too many tool calls waiting on this server",
	"tenant/over_share":  "this tenant has more than its share of this server's tool calls waiting beside other tenants'",
	"tenant/over_part":   "this tenant has more than its part of this server's tool calls under way beside other tenants'",
	"node/queue_full":    "the server is at capacity (too many tool calls waiting)",
	"node/wait_exceeded": "the server is at capacity (no place came free in time)",
}

// refuse is the error of a refused call, counted.
func (a *Admission) refuse(scope, reason string) error {
	code := switchboard.CodeUnavailable
	if scope == "tenant" {
		code = switchboard.CodeRateLimited
	}
	return a.refusal(scope, reason, code, refusalReasons[scope+"/"+reason]+"; nothing was run")
}

// refusal counts a refusal and returns its error: what the message says, then when to
// retry (RetryAfter, in whole seconds), which it also carries.
func (a *Admission) refusal(scope, reason string, code switchboard.Code, message string) error {
	if a.opts.Refused != nil {
		a.opts.Refused(scope, reason)
	}
	secs := int((a.opts.RetryAfter + time.Second - 1) / time.Second)
	return &switchboard.Error{Code: code, RetryAfter: a.opts.RetryAfter, Message: fmt.Sprintf("%s; retry in %d s", message, secs)}
}

// overPart reports whether a new call of the tenant is over its part of the calls in
// the node (see AdmissionOptions.TenantAdmitted and inHub): a call waited for a place
// within the last second, the tenant has TenantAdmitted calls in the node, another
// tenant is active, and the tenant is heavier than every other active tenant both by
// calls in the node and by calls asked for over the last second. Both: a tenant no
// heavier than a neighbour by calls in the node is not
// held to its part, so tenants flooding alike share MaxAdmitted as a tenant alone has
// it; and one that asks less than a neighbour is not either, though its calls pile up
// while the node stalls (the neighbour, held to its part, then has fewer under way).
// a.mu is held.
func (a *Admission) overPart(tenant switchboard.TenantID, now time.Time) bool {
	if a.opts.TenantAdmitted >= a.opts.MaxAdmitted {
		return false // no part: a tenant may have MaxAdmitted under way, and queue more
	}
	if now.Sub(a.waited) > activeFor {
		return false // no call waited for a place lately: the node has CPU to spare
	}
	a.age(now) // calls away that have turned slow count again (see inHub)
	mine := a.inHub(tenant)
	if mine < a.opts.TenantAdmitted {
		return false
	}
	myRate := a.asked[tenant].rate(now)
	beside := false
	for id, d := range a.asked {
		if id == tenant {
			continue
		}
		theirs := a.inHub(id)
		if theirs == 0 && !d.active(now) {
			delete(a.asked, id) // no longer active
			continue
		}
		if theirs >= mine || d.rate(now) >= myRate {
			return false
		}
		beside = true
	}
	return beside
}

// inHub is how many calls of the tenant are under way or waiting, except those
// waiting for an upstream's answer that is not yet slow (see UpstreamSlow): the calls
// its part bounds. Such calls cost the node no work until they come back, so a tenant
// whose calls mostly wait for an upstream taking its time is not held to a few dozen
// of them, and may use MaxAdmitted's room that would otherwise stay empty. Its calls
// at a slow upstream count: they hold that upstream's room (UpstreamAdmitted), which
// other tenants' calls to it need. a.mu is held.
func (a *Admission) inHub(tenant switchboard.TenantID) int {
	return a.under[tenant] - a.awayOf[tenant] + a.queued(tenant)
}

// sweep drops, once per activeFor, the tenants of asked no longer active, so it holds
// only the tenants active lately however many have ever called. a.mu is held.
func (a *Admission) sweep(now time.Time) {
	if now.Sub(a.swept) < activeFor {
		return
	}
	a.swept = now
	for id, d := range a.asked {
		if !d.active(now) && a.under[id]+a.queued(id) == 0 {
			delete(a.asked, id)
		}
	}
}

// queueOf returns the tenant's queue, made if it has none. a.mu is held.
func (a *Admission) queueOf(tenant switchboard.TenantID) *tenantQueue {
	t := a.tenants[tenant]
	if t == nil {
		t = &tenantQueue{id: tenant}
		a.tenants[tenant] = t
	}
	return t
}

// enqueue puts a tenant with a call waiting in the ring. a.mu is held.
func (a *Admission) enqueue(t *tenantQueue) {
	if !t.inRing {
		t.inRing = true
		a.ring = append(a.ring, t)
	}
}

// dispatch hands free places out one at a time to the waiting tenant that holds the
// fewest places, tenants holding as few taking turns; within a tenant, to its calls
// back from their upstream first, then to its new ones (while fewer than MaxAdmitted
// calls are admitted, once calls away at a slow upstream have left the count). So a
// tenant with a call or two gets the next place beside one holding many, and its call
// runs beside as little of the other's work as the bound allows. a.mu is held.
func (a *Admission) dispatch() {
	if a.admitted >= a.opts.MaxAdmitted && a.waiting > 0 && len(a.gates) > 0 {
		a.age(a.now()) // calls away at a slow upstream give their room
	}
	for a.running < a.opts.MaxInFlight && len(a.ring) > 0 {
		i := a.lightest()
		if i < 0 {
			// Only new calls wait, and MaxAdmitted calls are under way: the first to
			// turn slow at its upstream will make room.
			a.ageLater()
			return
		}
		t := a.ring[i]
		var w *waiter
		if len(t.resumes) > 0 {
			w, t.resumes = t.resumes[0], t.resumes[1:]
			a.resuming--
		} else {
			w, t.waiters = t.waiters[0], t.waiters[1:]
			a.waiting--
			a.admit(t.id)
		}
		a.grant(t.id, w)
		a.next = i + 1
		if len(t.resumes)+len(t.waiters) == 0 {
			a.next = i
			a.forget(t) // the ring shrinks at i: the next tenant moves into it
		}
	}
}

// lightest is the index in the ring of the tenant holding the fewest places, the
// first such from a.next on, among those with a call that may have a place: any call
// back from its upstream, a new call only while fewer than MaxAdmitted are admitted;
// -1 if none may. a.mu is held.
func (a *Admission) lightest() int {
	if a.next >= len(a.ring) {
		a.next = 0
	}
	room := a.admitted < a.opts.MaxAdmitted
	best, fewest := -1, -1
	for k := range len(a.ring) {
		i := (a.next + k) % len(a.ring)
		t := a.ring[i]
		if len(t.resumes) == 0 && !room {
			continue
		}
		if n := a.held[t.id]; fewest < 0 || n < fewest {
			best, fewest = i, n
		}
	}
	return best
}

func (a *Admission) grant(tenant switchboard.TenantID, w *waiter) {
	a.take(tenant)
	w.granted = true
	close(w.ready)
}

// admit and unadmit count a call of the tenant under way and ended. a.mu is held.
func (a *Admission) admit(tenant switchboard.TenantID) {
	a.admitted++
	a.under[tenant]++
}

func (a *Admission) unadmit(tenant switchboard.TenantID) {
	a.admitted--
	if a.under[tenant]--; a.under[tenant] <= 0 {
		delete(a.under, tenant)
	}
}

// take and give count a place taken and given back by a call of the tenant. a.mu is held.
func (a *Admission) take(tenant switchboard.TenantID) {
	a.running++
	a.held[tenant]++
}

func (a *Admission) give(tenant switchboard.TenantID) {
	a.running--
	if a.held[tenant]--; a.held[tenant] <= 0 {
		delete(a.held, tenant)
	}
}

// overShare reports whether a call of t, which would have to wait, is over the
// tenant's share of the node while other tenants have calls in it: each of n busy
// tenants may hold or wait for 2×MaxInFlight/n places (at least one), so a tenant
// flooding a busy node is refused at once, for the price of its headers, instead of
// lengthening every other tenant's wait. A tenant over its share is refused only if it
// has more calls under way (paused ones too) or waiting than every other: a tenant no
// heavier than its neighbour waits its turn (its bursts are not refused because the neighbour's flood
// fills the node, and the fewest-held-first turns serve it soon); tenants flooding
// alike are bound by their queues and MaxWait, as a tenant alone is. a.mu is held.
func (a *Admission) overShare(t *tenantQueue, now time.Time) bool {
	busy := len(a.held)
	for id, q := range a.tenants {
		if _, holds := a.held[id]; !holds && len(q.waiters)+len(q.resumes) > 0 {
			busy++
		}
	}
	if _, holds := a.held[t.id]; !holds && len(t.waiters)+len(t.resumes) == 0 {
		busy++ // t itself, busy from this call on
	}
	if busy < 2 {
		return false
	}
	if a.held[t.id]+len(t.waiters) < max(1, 2*a.opts.MaxInFlight/busy) {
		return false
	}
	// Heavier than every other tenant, counting calls under way (paused too) and
	// waiting: a tenant whose calls fill the bound on calls under way while they wait
	// for their upstream is the heavy one, though it holds few places. And asking for
	// more calls than each of them over the last second: a tenant asking a tenth of its
	// neighbour's, whose calls pile up while the node stalls (the neighbour held to its
	// part), is not the one to refuse.
	mine := a.under[t.id] + len(t.waiters) + len(t.resumes)
	myRate := a.rateOf(t.id, now)
	for id, n := range a.under {
		if id != t.id && (n+a.queued(id) >= mine || a.rateOf(id, now) >= myRate) {
			return false
		}
	}
	for id, q := range a.tenants {
		if _, under := a.under[id]; !under && id != t.id && (len(q.waiters)+len(q.resumes) >= mine || a.rateOf(id, now) >= myRate) {
			return false
		}
	}
	return true
}

// rateOf is the calls the tenant asked for over the last second (see demand). a.mu is held.
func (a *Admission) rateOf(tenant switchboard.TenantID, now time.Time) float64 {
	if d := a.asked[tenant]; d != nil {
		return d.rate(now)
	}
	return 0
}

// queued is how many calls of the tenant wait for a place. a.mu is held.
func (a *Admission) queued(tenant switchboard.TenantID) int {
	if q := a.tenants[tenant]; q != nil {
		return len(q.waiters) + len(q.resumes)
	}
	return 0
}

// forget drops a tenant that has no calls waiting from the ring and the map.
func (a *Admission) forget(t *tenantQueue) {
	if len(t.waiters)+len(t.resumes) > 0 {
		return
	}
	if t.inRing {
		for i, x := range a.ring {
			if x == t {
				a.ring = append(a.ring[:i], a.ring[i+1:]...)
				if i < a.next {
					a.next--
				}
				break
			}
		}
		t.inRing = false
	}
	delete(a.tenants, t.id)
}

// Release gives the place back for good. Calling it again does nothing.
func (s *Slot) Release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.away != "" {
		a.back(s)
	}
	if s.held {
		s.held = false
		a.give(s.tenant)
	}
	a.unadmit(s.tenant)
	a.dispatch()
}

// Open reports whether the slot is a place not yet released for good (paused or
// held): a request admitted at its door hands its slot to the calls it makes, which do
// not queue again; a released one (its request ended) is no one's to use.
func (s *Slot) Open() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// Pause gives the place back while the call waits outside the hub; unlike Away, the
// call keeps counting among MaxAdmitted however long it waits.
func (s *Slot) Pause() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.held = false
	s.a.release(s.tenant)
}

// Resume takes a place again after Pause or Away, ahead of its tenant's calls not yet
// started (a call that has reached its upstream is finished before its tenant's new
// work starts), in turn with other tenants. It is never refused.
func (s *Slot) Resume() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held || s.closed {
		return
	}
	s.a.mu.Lock()
	if s.away != "" {
		s.a.back(s)
	}
	s.retake()
}

// retake takes a place again for s, not held, as Resume says. s.mu and a.mu are
// held; it unlocks a.mu.
func (s *Slot) retake() {
	a := s.a
	if a.running < a.opts.MaxInFlight && a.waiting == 0 && a.resuming == 0 {
		a.take(s.tenant)
		a.mu.Unlock()
		s.held = true
		return
	}
	w := &waiter{ready: make(chan struct{})}
	t := a.queueOf(s.tenant)
	t.resumes = append(t.resumes, w)
	a.resuming++
	a.waited = a.now()
	a.enqueue(t)
	a.dispatch()
	a.mu.Unlock()
	<-w.ready
	s.held = true
}

func (a *Admission) release(tenant switchboard.TenantID) {
	a.mu.Lock()
	a.give(tenant)
	a.dispatch()
	a.mu.Unlock()
}

// States counts the calls in the admission by state: "running" (holding a place),
// "waiting" (new, at the door), "resuming" (back from their upstream or their commit,
// waiting for a place), "audit_commit" (paused for their audit row's commit),
// "upstream" (waiting for an upstream's answer), "upstream_slow" (for longer than
// UpstreamSlow) and "upstream_queued" (waiting to go to an upstream that has
// UpstreamAdmitted calls away). Each call is in one state.
func (a *Admission) States() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	st := map[string]int{"running": a.running, "waiting": a.waiting, "resuming": a.resuming}
	under := 0
	for _, n := range a.under {
		under += n
	}
	for _, g := range a.gates {
		for s := g.head; s != nil && now.Sub(s.went) >= a.opts.UpstreamSlow; s = s.next {
			st["upstream_slow"]++
		}
		st["upstream_queued"] += len(g.queue)
		st["upstream"] += g.away
	}
	st["upstream"] -= st["upstream_slow"]
	st["audit_commit"] = under - a.running - a.resuming - st["upstream"] - st["upstream_slow"] - st["upstream_queued"]
	return st
}

// Running and Waiting are how many calls hold a place and wait for one.
func (a *Admission) Running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// Waiting is how many calls wait for a place (calls back from their upstream too).
func (a *Admission) Waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiting + a.resuming
}

type slotKey struct{}

// WithSlot returns ctx carrying the call's slot, so the upstream transport can pause it.
func WithSlot(ctx context.Context, s *Slot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

// SlotFrom returns the slot in ctx, or nil (Pause and Resume on nil do nothing).
func SlotFrom(ctx context.Context) *Slot {
	s, _ := ctx.Value(slotKey{}).(*Slot)
	return s
}
