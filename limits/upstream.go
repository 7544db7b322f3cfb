package limits

import (
	"context"
	"math"
	"sync"
	"time"
)

// Rate is the shape of an upstream account's token bucket: PerSecond requests a second
// sustained, Burst at once. A zero PerSecond is no bucket: only the windows the
// upstream announces apply.
type Rate struct {
	PerSecond float64
	Burst     int
}

// interval is the time one request's token takes to come back; zero without a bucket.
func (r Rate) interval() time.Duration {
	if r.PerSecond <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / r.PerSecond)
}

func (r Rate) burst() int { return max(r.Burst, 1) }

// share is a 1/n share of r, for one of n nodes that cannot reach their shared state.
func (r Rate) share(n int) Rate {
	if n <= 1 || r.PerSecond <= 0 {
		return r
	}
	return Rate{PerSecond: r.PerSecond / float64(n), Burst: max(1, r.Burst/n)}
}

// Upstream keeps the rate-limit state of upstream accounts, by key (a connection's id):
// its token bucket and the window its upstream announced (Retry-After, a spent quota
// until its reset). Local keeps it in this process, for one node; Redis shares it
// between the nodes of a fleet, so that together they send an upstream no more than
// its limit. Implementations are safe for concurrent use and never fail: one that
// cannot reach its shared state falls back to a share of the limit it keeps itself.
type Upstream interface {
	// Take takes one request's worth of key's bucket, after key's announced window,
	// and returns how long the request must wait before it goes. When that is longer
	// than maxWait nothing is taken, and ok is false with the wait.
	Take(ctx context.Context, key string, r Rate, maxWait time.Duration) (wait time.Duration, ok bool)
	// Block records that key's upstream asked for no requests for wait from now.
	Block(ctx context.Context, key string, wait time.Duration)
	// Forget drops key's state: its connection is gone.
	Forget(ctx context.Context, key string)
}

// Local is the Upstream of one process: with several nodes, each keeps its own
// buckets, and together they send an upstream up to n times its limit.
type Local struct {
	mu  sync.Mutex
	m   map[string]*gcra
	now func() time.Time
	// sweepAt is the size at which the next Take drops the keys whose state is that of
	// a fresh key (their bucket full again, no window): keys named by client addresses
	// (client registrations) would otherwise grow the map for ever.
	sweepAt int
}

var _ Upstream = (*Local)(nil)

// NewLocal returns an empty Local.
func NewLocal() *Local { return &Local{m: map[string]*gcra{}, now: time.Now, sweepAt: minSweep} }

// minSweep is the fewest keys a Local holds before it sweeps.
const minSweep = 4096

// gcra is one key's state, as the generic cell rate algorithm keeps it: tat is the
// theoretical arrival time of the next request with a full bucket; blocked is the end
// of the upstream's announced window.
type gcra struct {
	tat, blocked time.Time
}

// take is the algorithm the Redis script runs too: a request arriving at t0 (now, or
// the window's end) may go once the bucket has a token, which is burst-1 intervals
// before tat; taking it moves tat one interval on.
func (g *gcra) take(now time.Time, r Rate, maxWait time.Duration) (time.Duration, bool) {
	t0 := now
	if g.blocked.After(t0) {
		t0 = g.blocked
	}
	iv := r.interval()
	if iv == 0 {
		wait := t0.Sub(now)
		return wait, wait <= maxWait
	}
	tat := g.tat
	if tat.Before(t0) {
		tat = t0
	}
	allow := tat.Add(-time.Duration(r.burst()-1) * iv)
	if allow.Before(t0) {
		allow = t0
	}
	wait := allow.Sub(now)
	if wait > maxWait {
		return wait, false
	}
	g.tat = tat.Add(iv)
	return wait, true
}

// Take implements Upstream.
func (l *Local) Take(_ context.Context, key string, r Rate, maxWait time.Duration) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.m) >= l.sweepAt {
		l.sweep(now)
	}
	return l.gcraOf(key).take(now, r, maxWait)
}

// sweep drops the keys a fresh state would answer the same for: their theoretical
// arrival time and their window are past. l.mu must be held.
func (l *Local) sweep(now time.Time) {
	for k, g := range l.m {
		if !g.tat.After(now) && !g.blocked.After(now) {
			delete(l.m, k)
		}
	}
	l.sweepAt = max(minSweep, 2*len(l.m))
}

// gcraOf returns key's state, created on first use; l.mu must be held.
func (l *Local) gcraOf(key string) *gcra {
	g := l.m[key]
	if g == nil {
		g = &gcra{}
		l.m[key] = g
	}
	return g
}

// Block implements Upstream.
func (l *Local) Block(_ context.Context, key string, wait time.Duration) {
	if wait <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.gcraOf(key)
	if until := l.now().Add(wait); until.After(g.blocked) {
		g.blocked = until
	}
}

// Forget implements Upstream.
func (l *Local) Forget(_ context.Context, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, key)
}

// ceilMillis is d in whole milliseconds, rounded up.
func ceilMillis(d time.Duration) int64 {
	return int64(math.Ceil(float64(d) / float64(time.Millisecond)))
}
