package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/redistest"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
)

// countingUpstream answers GET /user as GitHub does and counts what it receives; once
// limited is set it answers 429 with Retry-After: 60, as GitHub's secondary rate limit.
type countingUpstream struct {
	*httptest.Server
	n       atomic.Int64
	limited atomic.Bool
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	t.Helper()
	u := &countingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer ghp_shared" || r.URL.Path != "/user" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		if u.limited.Load() {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
			return
		}
		_, _ = io.WriteString(w, `{"login":"octocat","id":583231}`)
	}))
	t.Cleanup(u.Close)
	return u
}

// fleetClients returns one client of connection conn_1 per store, as the nodes of a
// fleet build them.
func fleetClients(spec *providers.Spec, stores []limits.Upstream) []*http.Client {
	var out []*http.Client
	for _, s := range stores {
		tokens := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ghp_shared", TokenType: "Bearer"})
		out = append(out, providers.NewClient(spec, providers.NewTransport(), tokens, providers.LimiterFor(spec, s, "conn_1")))
	}
	return out
}

// getAll sends tries GET /user from every client at once and returns the rate_limited
// refusals, which must each say when to retry.
func getAll(t *testing.T, clients []*http.Client, url string, tries int) int {
	t.Helper()
	var refused atomic.Int64
	var wg sync.WaitGroup
	for _, c := range clients {
		for range tries {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/user", nil)
				resp, err := c.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					return
				}
				var ue *providers.UpstreamError
				if !errors.As(err, &ue) || ue.Code != switchboard.CodeRateLimited || ue.RetryAfter <= 0 {
					t.Errorf("GET /user: %v; want a rate_limited refusal with a retry-after", err)
					return
				}
				refused.Add(1)
			})
		}
	}
	testwait.Wait(t, "the requests to be answered", wg.Wait)
	return int(refused.Load())
}

// TestFleetSharesConnectionLimits runs three nodes' clients of one connection on one
// redis-server against a fake upstream that counts what it receives: together they send
// no more than the connection's limit (three nodes with limits of their own send it
// three times), and once the upstream answers Retry-After to one node, the others
// send nothing more.
func TestFleetSharesConnectionLimits(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// A burst of 6 and one more token an hour: what goes at once is the burst.
	spec := &providers.Spec{Name: "github", RateLimit: providers.RateLimit{PerSecond: 1.0 / 3600, Burst: 6, MaxWait: 20 * time.Millisecond}}
	var shared []limits.Upstream
	for range 3 {
		r, err := limits.NewRedis(limits.RedisOptions{URL: srv.URL, Nodes: func() int { return 3 }, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		shared = append(shared, r)
	}
	tests := []struct {
		name   string
		stores []limits.Upstream
		want   int64
	}{
		{name: "shared through redis", stores: shared, want: 6},
		{name: "per process", stores: []limits.Upstream{limits.NewLocal(), limits.NewLocal(), limits.NewLocal()}, want: 18},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := newCountingUpstream(t)
			refused := getAll(t, fleetClients(spec, tc.stores), up.URL, 10)
			if got := up.n.Load(); got != tc.want || int64(refused) != 30-tc.want {
				t.Errorf("three nodes sent the upstream %d requests and refused %d; want %d and %d", got, refused, tc.want, 30-tc.want)
			}
		})
	}

	// The upstream's window, announced to node A, holds nodes B and C.
	roomy := &providers.Spec{Name: "github", RateLimit: providers.RateLimit{PerSecond: 100, Burst: 100, MaxWait: time.Second}}
	for _, r := range shared {
		r.Forget(context.Background(), "conn_1")
	}
	up := newCountingUpstream(t)
	clients := fleetClients(roomy, shared)
	up.limited.Store(true)
	if refused := getAll(t, clients[:1], up.URL, 1); refused != 0 {
		t.Fatalf("node A's request was refused before reaching the upstream")
	}
	up.limited.Store(false)
	if refused := getAll(t, clients[1:], up.URL, 5); refused != 10 {
		t.Errorf("nodes B and C: %d of 10 requests refused after node A's Retry-After: 60, want all", refused)
	}
	if got := up.n.Load(); got != 1 {
		t.Errorf("the upstream received %d requests, want 1 (node A's)", got)
	}
}
