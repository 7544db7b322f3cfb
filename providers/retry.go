package providers

import (
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard/egress"
)

// retrier sends a request again, with exponential backoff and full jitter, when the
// attempt failed in a way worth retrying (a network error, 429, 500, 502, 503, 504) and
// the operation is safe to repeat (read-only or idempotent, see Hints.Retryable). Other
// operations are sent exactly once. Waits the upstream asks for (Retry-After) are
// honoured by the limiter below it.
type retrier struct {
	next     http.RoundTripper
	attempts int
	base     time.Duration
	maxWait  time.Duration // an upstream window longer than this is not waited out
}

func (t *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	if !retryable(req.Context()) || (req.Body != nil && req.GetBody == nil) {
		return t.next.RoundTrip(req)
	}
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 && req.Body != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := t.next.RoundTrip(r)
		if attempt+1 >= t.attempts || !t.worthRetrying(resp, err) || req.Context().Err() != nil {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		}
		backoff := time.Duration(rand.Int64N(int64(t.base << attempt)))
		if err := sleep(req.Context(), backoff); err != nil {
			return nil, err
		}
	}
}

func (t *retrier) worthRetrying(resp *http.Response, err error) bool {
	if err != nil {
		var ue *UpstreamError
		var re *egress.RefusedError
		return !errors.As(err, &ue) && !errors.As(err, &re) // our own refusals are final
	}
	if wait, limited := RateLimitWait(resp.Header, time.Now()); limited && wait > t.maxWait {
		return false // the caller is better told to come back than held
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
