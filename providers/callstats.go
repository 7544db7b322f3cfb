package providers

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// CallStats collects what one call's HTTP client measured: the time its requests spent
// on the wire to the upstream (every attempt, retries included), the time it waited
// for the connection's rate limit, and whether the limit refused it. The router puts
// one in the call's context and reads it for the call's metrics. Safe for concurrent
// use.
type CallStats struct {
	upstream  atomic.Int64 // nanoseconds
	limitWait atomic.Int64 // nanoseconds
	limited   atomic.Bool
}

// Upstream is the time the call's requests spent waiting for the upstream.
func (s *CallStats) Upstream() time.Duration { return time.Duration(s.upstream.Load()) }

// RateLimitWait is the time the call waited for its connection's rate limit.
func (s *CallStats) RateLimitWait() time.Duration { return time.Duration(s.limitWait.Load()) }

// RateLimited reports whether the connection's rate limit refused the call.
func (s *CallStats) RateLimited() bool { return s.limited.Load() }

type callStatsKey struct{}

// WithCallStats returns a context whose calls record their measurements in s.
func WithCallStats(ctx context.Context, s *CallStats) context.Context {
	return context.WithValue(ctx, callStatsKey{}, s)
}

func callStatsFrom(ctx context.Context) *CallStats {
	s, _ := ctx.Value(callStatsKey{}).(*CallStats)
	return s
}

// TimedTransport returns next measuring each round trip into the call's CallStats, for
// transports built outside Transports (a remote MCP server's sessions).
func TimedTransport(next http.RoundTripper) http.RoundTripper { return &timedTransport{next: next} }

// timedTransport adds the time of each round trip to the call's CallStats. It sits
// right above the provider's shared transport, so it sees every attempt and nothing of
// the waits above it.
type timedTransport struct{ next http.RoundTripper }

func (t *timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s := callStatsFrom(req.Context())
	if s == nil {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	s.upstream.Add(int64(time.Since(start)))
	return resp, err
}
