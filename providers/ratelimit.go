package providers

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
)

// DefaultMaxWait is how long a call waits for a rate limit when the Spec sets none.
const DefaultMaxWait = 5 * time.Second

// Limiter is one connection's rate limit: its token bucket, and the window its
// upstream announced (Retry-After, X-RateLimit-Remaining: 0 until X-RateLimit-Reset).
// Their state lives in a limits.Upstream under the connection's key: in this process
// (limits.Local), or in Redis, shared by every node of a fleet, so that together they
// send the upstream no more than the provider's limit. A rebuilt client with a Limiter
// of the same key and store still knows the upstream asked to wait.
type Limiter struct {
	provider string
	key      string
	rate     limits.Rate
	maxWait  time.Duration
	store    limits.Upstream
}

// NewLimiter returns a limiter of its own, kept in this process, from its provider's
// RateLimit: for a client used once, such as a token check.
func NewLimiter(spec *Spec) *Limiter {
	return LimiterFor(spec, limits.NewLocal(), "")
}

// LimiterFor returns the limiter of the connection key, whose state store keeps.
func LimiterFor(spec *Spec, store limits.Upstream, key string) *Limiter {
	rl := spec.RateLimit
	l := &Limiter{provider: spec.Name, key: key, maxWait: rl.MaxWait, store: store,
		rate: limits.Rate{PerSecond: rl.PerSecond, Burst: rl.Burst}}
	if l.maxWait <= 0 {
		l.maxWait = DefaultMaxWait
	}
	return l
}

// WithRate replaces the limiter's token bucket with a connection's own (an admin set
// it on the connection), keeping its key, store and wait; it returns l.
func (l *Limiter) WithRate(r limits.Rate) *Limiter {
	l.rate = r
	return l
}

// limitTransport makes every request wait for its connection's Limiter. A call that
// would wait longer than the limiter's maxWait fails at once with rate_limited and the
// time to wait, so an agent is told to come back instead of being held.
type limitTransport struct {
	*Limiter
	next http.RoundTripper
}

func (l *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := l.take(req.Context()); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if wait, spent := RateLimitWait(resp.Header, time.Now()); spent && wait > 0 {
		l.store.Block(req.Context(), l.key, wait)
	}
	return resp, nil
}

// take waits for the upstream's announced window and the token bucket, or fails at
// once with rate_limited and the time to wait when that is longer than maxWait. The
// wait and the refusal go to the call's CallStats. A call canceled while it waits has
// spent its token.
func (l *Limiter) take(ctx context.Context) error {
	stats := callStatsFrom(ctx)
	wait, ok := l.store.Take(ctx, l.key, l.rate, l.maxWait)
	if !ok {
		return l.refuse(stats, wait)
	}
	if wait > 0 {
		return l.sleep(ctx, stats, wait)
	}
	return nil
}

// sleep waits d for the limit and counts it in stats.
func (l *Limiter) sleep(ctx context.Context, stats *CallStats, d time.Duration) error {
	if stats != nil {
		stats.limitWait.Add(int64(d))
	}
	return sleep(ctx, d)
}

// refuse is the rate_limited error of a call that would wait too long.
func (l *Limiter) refuse(stats *CallStats, wait time.Duration) error {
	if stats != nil {
		stats.limited.Store(true)
	}
	return &UpstreamError{
		Provider: l.provider, Status: http.StatusTooManyRequests, Code: switchboard.CodeRateLimited,
		Reason: "rate_limited", Message: "this connection's rate limit is spent; nothing was sent", RetryAfter: wait,
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
