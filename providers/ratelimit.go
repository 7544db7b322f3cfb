package providers

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/switchboard-hub/switchboard"
)

// DefaultMaxWait is how long a call waits for a rate limit when the Spec sets none.
const DefaultMaxWait = 5 * time.Second

// limiter enforces one connection's token bucket and the windows its upstream announces
// (Retry-After, X-RateLimit-Remaining: 0 until X-RateLimit-Reset). A call that would
// wait longer than maxWait fails at once with rate_limited and the time to wait, so an
// agent is told to come back instead of being held.
type limiter struct {
	provider     string
	next         http.RoundTripper
	bucket       *rate.Limiter
	maxWait      time.Duration
	blockedUntil atomic.Int64 // unix nanoseconds; the upstream's window
}

func newLimiter(provider string, rl RateLimit, next http.RoundTripper) *limiter {
	l := &limiter{provider: provider, next: next, maxWait: rl.MaxWait, bucket: rate.NewLimiter(rate.Inf, 0)}
	if rl.PerSecond > 0 {
		l.bucket = rate.NewLimiter(rate.Limit(rl.PerSecond), max(rl.Burst, 1))
	}
	if l.maxWait <= 0 {
		l.maxWait = DefaultMaxWait
	}
	return l
}

func (l *limiter) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	now := time.Now()
	if until := l.blockedUntil.Load(); until > now.UnixNano() {
		wait := time.Duration(until - now.UnixNano())
		if wait > l.maxWait {
			return nil, l.limited(req, wait)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	r := l.bucket.ReserveN(time.Now(), 1)
	if d := r.Delay(); d > 0 {
		if d > l.maxWait {
			r.Cancel()
			return nil, l.limited(req, d)
		}
		if err := sleep(ctx, d); err != nil {
			r.Cancel()
			return nil, err
		}
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if wait, spent := RateLimitWait(resp.Header, time.Now()); spent && wait > 0 {
		l.blockedUntil.Store(time.Now().Add(wait).UnixNano())
	}
	return resp, nil
}

func (l *limiter) limited(req *http.Request, wait time.Duration) error {
	if req.Body != nil {
		_ = req.Body.Close()
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
