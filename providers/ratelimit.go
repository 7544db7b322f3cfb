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

// Limiter is one connection's rate-limit state: its token bucket, and the window its
// upstream announced (Retry-After, X-RateLimit-Remaining: 0 until X-RateLimit-Reset).
// It belongs to the connection, not to a client: keep it while the connection lives, so
// that a rebuilt client still knows the upstream asked to wait.
type Limiter struct {
	provider     string
	bucket       *rate.Limiter
	maxWait      time.Duration
	blockedUntil atomic.Int64 // unix nanoseconds; the upstream's window
}

// NewLimiter returns a connection's limiter from its provider's RateLimit.
func NewLimiter(spec *Spec) *Limiter {
	rl := spec.RateLimit
	l := &Limiter{provider: spec.Name, maxWait: rl.MaxWait, bucket: rate.NewLimiter(rate.Inf, 0)}
	if rl.PerSecond > 0 {
		l.bucket = rate.NewLimiter(rate.Limit(rl.PerSecond), max(rl.Burst, 1))
	}
	if l.maxWait <= 0 {
		l.maxWait = DefaultMaxWait
	}
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

func (l *Limiter) limited(req *http.Request, wait time.Duration) error {
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
