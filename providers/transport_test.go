package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// flaky answers with the given statuses in turn (the last one repeats) and counts the
// requests it received, recording the bodies and Authorization headers.
type flaky struct {
	statuses []int
	headers  []http.Header
	n        atomic.Int32
	bodies   chan string
	auth     chan string
}

func newFlaky(t *testing.T, statuses []int, headers ...http.Header) (*flaky, *httptest.Server) {
	f := &flaky{statuses: statuses, headers: headers, bodies: make(chan string, 16), auth: make(chan string, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(f.n.Add(1)) - 1
		b, _ := io.ReadAll(r.Body)
		f.bodies <- string(b)
		f.auth <- r.Header.Get("Authorization")
		st := f.statuses[min(i, len(f.statuses)-1)]
		if i < len(f.headers) {
			for k, v := range f.headers[i] {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(st)
		_, _ = io.WriteString(w, `{"n":`+strconv.Itoa(i)+`}`)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func testClient(rl RateLimit) *http.Client {
	spec := &Spec{Name: "fake", RateLimit: rl, Headers: map[string]string{"Accept": "application/json"}}
	c := NewClient(spec, NewTransport(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok-123"}), nil)
	return c
}

func post(ctx context.Context, c *http.Client, url, body string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	return c.Do(req)
}

func TestRetryOnlyWhatIsSafe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		retryable bool
		statuses  []int
		wantCalls int32
		wantFinal int
	}{
		{name: "idempotent retried through 503 then ok", retryable: true, statuses: []int{503, 502, 200}, wantCalls: 3, wantFinal: 200},
		{name: "idempotent gives up after 3 attempts", retryable: true, statuses: []int{500}, wantCalls: 3, wantFinal: 500},
		{name: "idempotent 404 is not retried", retryable: true, statuses: []int{404}, wantCalls: 1, wantFinal: 404},
		{name: "non-idempotent 503 sent once", retryable: false, statuses: []int{503, 200}, wantCalls: 1, wantFinal: 503},
		{name: "non-idempotent 429 sent once", retryable: false, statuses: []int{429, 200}, wantCalls: 1, wantFinal: 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFlaky(t, tt.statuses)
			c := testClient(RateLimit{})
			c.Transport.(*deadlineTransport).next.(*retrier).base = time.Millisecond
			ctx := withRetryable(context.Background(), tt.retryable)
			resp, err := post(ctx, c, srv.URL+"/x", `{"a":1}`)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantFinal {
				t.Errorf("final status = %d, want %d", resp.StatusCode, tt.wantFinal)
			}
			if got := f.n.Load(); got != tt.wantCalls {
				t.Errorf("upstream received %d requests, want %d", got, tt.wantCalls)
			}
			for range f.n.Load() {
				if b := testwait.Recv(t, f.bodies, "the upstream to receive the body"); b != `{"a":1}` {
					t.Errorf("attempt sent body %q, want the original body", b)
				}
				if a := testwait.Recv(t, f.auth, "the upstream to receive the request"); a != "Bearer tok-123" {
					t.Errorf("Authorization = %q", a)
				}
			}
		})
	}
}

func TestLimiterHonoursUpstreamWindows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		header   http.Header
		status   int
		wantWait time.Duration // the rate_limited error's RetryAfter on the next call, roughly
	}{
		{name: "Retry-After seconds", status: 429, header: http.Header{"Retry-After": {"30"}}, wantWait: 30 * time.Second},
		{name: "GitHub X-RateLimit-Remaining 0", status: 200, header: http.Header{
			"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)},
		}, wantWait: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFlaky(t, []int{tt.status, 200}, tt.header)
			c := testClient(RateLimit{MaxWait: time.Second})
			ctx := withRetryable(context.Background(), false)
			resp, err := post(ctx, c, srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			_, err = post(ctx, c, srv.URL, "")
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("second call error = %v, want *UpstreamError", err)
			}
			if ue.Code != switchboard.CodeRateLimited {
				t.Errorf("code = %s, want rate_limited", ue.Code)
			}
			if ue.RetryAfter < tt.wantWait-5*time.Second || ue.RetryAfter > tt.wantWait {
				t.Errorf("RetryAfter = %s, want about %s", ue.RetryAfter, tt.wantWait)
			}
			if got := f.n.Load(); got != 1 {
				t.Errorf("upstream received %d requests, want 1: the second must not be sent", got)
			}
		})
	}
}

func TestLimiterOutlivesItsClient(t *testing.T) {
	t.Parallel()
	f, srv := newFlaky(t, []int{429, 200}, http.Header{"Retry-After": {"600"}})
	spec := &Spec{Name: "fake"}
	lim := NewLimiter(spec)
	tokens := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"})
	resp, err := post(context.Background(), NewClient(spec, NewTransport(), tokens, lim), srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// A client rebuilt for the same connection (new record, rotated token) shares the
	// limiter, so it still honours the upstream's ten-minute window.
	_, err = post(context.Background(), NewClient(spec, NewTransport(), tokens, lim), srv.URL, "")
	if switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("call through a rebuilt client = %v, want rate_limited", err)
	}
	if got := f.n.Load(); got != 1 {
		t.Errorf("upstream received %d requests, want 1", got)
	}
}

func TestLimiterTokenBucket(t *testing.T) {
	t.Parallel()
	f, srv := newFlaky(t, []int{200})
	// One request per hour with a burst of 2: the third call cannot be served within MaxWait.
	c := testClient(RateLimit{PerSecond: 1.0 / 3600, Burst: 2, MaxWait: 50 * time.Millisecond})
	ctx := context.Background()
	for i := range 2 {
		resp, err := post(ctx, c, srv.URL, "")
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		resp.Body.Close()
	}
	_, err := post(ctx, c, srv.URL, "")
	if switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Fatalf("third call: %v, want rate_limited", err)
	}
	if got := f.n.Load(); got != 2 {
		t.Errorf("upstream received %d, want 2", got)
	}
}

func TestLimiterWaitsForShortWindows(t *testing.T) {
	t.Parallel()
	f, srv := newFlaky(t, []int{429, 200}, http.Header{"Retry-After": {"1"}})
	c := testClient(RateLimit{MaxWait: 3 * time.Second})
	c.Transport.(*deadlineTransport).next.(*retrier).base = time.Millisecond
	// A read: retried after the upstream's window instead of failing.
	ctx := withRetryable(context.Background(), true)
	resp, err := post(ctx, c, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || f.n.Load() != 2 {
		t.Errorf("status %d after %d requests, want 200 after 2", resp.StatusCode, f.n.Load())
	}
}

func TestRateLimitWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		h           http.Header
		wantWait    time.Duration
		wantLimited bool
	}{
		{name: "none", h: http.Header{}},
		{name: "retry-after seconds", h: http.Header{"Retry-After": {"7"}}, wantWait: 7 * time.Second, wantLimited: true},
		{name: "retry-after http date", h: http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, wantWait: 90 * time.Second, wantLimited: true},
		{name: "remaining but not spent", h: http.Header{"X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {"1"}}},
		{name: "spent until reset", h: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(time.Minute).Unix(), 10)}}, wantWait: time.Minute, wantLimited: true},
		{name: "reset in the past", h: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(-time.Minute).Unix(), 10)}}, wantLimited: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wait, limited := RateLimitWait(tt.h, now)
			if wait != tt.wantWait || limited != tt.wantLimited {
				t.Errorf("RateLimitWait = %s, %v; want %s, %v", wait, limited, tt.wantWait, tt.wantLimited)
			}
		})
	}
}

func TestStatusError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		h      http.Header
		want   switchboard.Code
	}{
		{401, nil, switchboard.CodeReconnect},
		{403, nil, switchboard.CodeForbidden},
		{403, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"0"}}, switchboard.CodeRateLimited},
		{404, nil, switchboard.CodeNotFound},
		{409, nil, switchboard.CodeConflict},
		{422, nil, switchboard.CodeInvalid},
		{429, nil, switchboard.CodeRateLimited},
		{500, nil, switchboard.CodeUpstream},
		{503, nil, switchboard.CodeUpstream},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			t.Parallel()
			h := tt.h
			if h == nil {
				h = http.Header{}
			}
			e := StatusError("fake", &http.Response{StatusCode: tt.status, Header: h}, "", "msg")
			if e.Code != tt.want || switchboard.CodeOf(e) != tt.want {
				t.Errorf("code = %s, want %s", e.Code, tt.want)
			}
		})
	}
}

// TestAuthHeader checks that a provider's AuthHeader decides how the token is sent,
// and that without one the token goes as Authorization: Bearer.
func TestAuthHeader(t *testing.T) {
	t.Parallel()
	bare := func(tok string) (string, string) {
		if strings.HasPrefix(tok, "key_") {
			return "Authorization", tok
		}
		return "Authorization", "Bearer " + tok
	}
	for _, tc := range []struct {
		name       string
		authHeader func(string) (string, string)
		token      string
		want       string
	}{
		{name: "default is Bearer", token: "tok-123", want: "Bearer tok-123"},
		{name: "hook sends an API key bare", authHeader: bare, token: "key_abc", want: "key_abc"},
		{name: "hook sends an OAuth token as Bearer", authHeader: bare, token: "oauth_abc", want: "Bearer oauth_abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFlaky(t, []int{http.StatusOK})
			spec := &Spec{Name: "fake", RateLimit: RateLimit{PerSecond: 100, Burst: 10}, AuthHeader: tc.authHeader}
			c := NewClient(spec, NewTransport(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tc.token, TokenType: "Bearer"}), nil)
			resp, err := post(context.Background(), c, srv.URL, "{}")
			if err != nil {
				t.Fatalf("post: %v", err)
			}
			_ = resp.Body.Close()
			if got := testwait.Recv(t, f.auth, "the upstream to receive the request"); got != tc.want {
				t.Errorf("Authorization = %q, want %q", got, tc.want)
			}
		})
	}
}

// deadlineSeen is a transport that records the context and deadline of the request it
// is given and answers 200.
type deadlineSeen struct {
	deadline time.Time
	has      bool
	ctx      context.Context
}

func (d *deadlineSeen) RoundTrip(req *http.Request) (*http.Response, error) {
	d.ctx = req.Context()
	d.deadline, d.has = req.Context().Deadline()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: req}, nil
}

func TestClientBoundsRequestsWithoutADeadline(t *testing.T) {
	spec := &Spec{Name: "fake"}
	seen := &deadlineSeen{}
	c := NewClient(spec, seen, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"}), nil)

	// No deadline of the caller's: the client sets its own, held until the body closes.
	before := time.Now()
	req, _ := http.NewRequest(http.MethodGet, "https://upstream.example/x", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if !seen.has {
		t.Fatal("a request without a deadline reached the upstream without one; it could hang for ever")
	}
	if got := seen.deadline.Sub(before); got < clientTimeout-time.Second || got > clientTimeout+time.Second {
		t.Fatalf("the client's deadline is %s away, want %s", got, clientTimeout)
	}
	if err := seen.ctx.Err(); err != nil {
		t.Fatalf("the request's context ended before its body was read: %v", err)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if seen.ctx.Err() == nil {
		t.Fatal("closing the body did not release the request's timer")
	}

	// The caller's deadline stands, earlier or later than the client's: the client
	// adds no timer of its own to a request that has one.
	for _, d := range []time.Duration{time.Second, 10 * time.Minute} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		want, _ := ctx.Deadline()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://upstream.example/x", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		cancel()
		if !seen.deadline.Equal(want) {
			t.Fatalf("a caller's deadline %s away reached the upstream as %s", d, seen.deadline.Sub(want))
		}
	}
}
