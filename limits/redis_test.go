package limits_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/redistest"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
)

// newNodes returns n Redis stores on url, as n nodes of a fleet hold them, logging to log.
// Their round trips may take up to 10 s: on a loaded machine a shorter bound would
// fall back to the node's share and change the counts the tests check.
func newNodes(t *testing.T, url string, n int, log *testlog.Buffer) []*limits.Redis {
	t.Helper()
	var out []*limits.Redis
	for range n {
		r, err := limits.NewRedis(limits.RedisOptions{URL: url, Nodes: func() int { return n }, Timeout: 10 * time.Second,
			RetryAfter: time.Hour, Logger: slog.New(slog.NewTextHandler(log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		out = append(out, r)
	}
	return out
}

// slow is a bucket that gains no token while a test runs: what is taken at once is
// the burst, whatever the test's speed.
var slow = limits.Rate{PerSecond: 0.001, Burst: 6}

// takeAll has every node try, concurrently, to take tries tokens at once (no wait),
// and returns how many were taken in all.
func takeAll(ctx context.Context, nodes []limits.Upstream, key string, tries int) int {
	var (
		mu    sync.Mutex
		taken int
		wg    sync.WaitGroup
	)
	for _, n := range nodes {
		for range tries {
			wg.Go(func() {
				if _, ok := n.Take(ctx, key, slow, 0); ok {
					mu.Lock()
					taken++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return taken
}

// TestRedisSharesTheBucket runs three nodes' stores on one redis-server: together they
// take the bucket's burst and no more, where three Local stores take it three times.
func TestRedisSharesTheBucket(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	var log testlog.Buffer
	var shared []limits.Upstream
	for _, r := range newNodes(t, srv.URL, 3, &log) {
		if err := r.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		shared = append(shared, r)
	}
	local := []limits.Upstream{limits.NewLocal(), limits.NewLocal(), limits.NewLocal()}
	tests := []struct {
		name  string
		nodes []limits.Upstream
		want  int
	}{
		{name: "redis", nodes: shared, want: slow.Burst},
		{name: "local", nodes: local, want: 3 * slow.Burst},
	}
	for _, tc := range tests {
		if got := takeAll(ctx, tc.nodes, "conn_shared", 10); got != tc.want {
			t.Errorf("%s: three nodes took %d tokens at once, want %d", tc.name, got, tc.want)
		}
	}
	// Another connection has a bucket of its own.
	if got := takeAll(ctx, shared, "conn_other", 10); got != slow.Burst {
		t.Errorf("another connection: %d tokens, want %d", got, slow.Burst)
	}
	// A forgotten connection starts full on every node.
	shared[0].Forget(ctx, "conn_shared")
	if got := takeAll(ctx, shared[1:], "conn_shared", 10); got != slow.Burst {
		t.Errorf("after Forget: %d tokens, want %d", got, slow.Burst)
	}
	if log.String() != "" {
		t.Errorf("logged with Redis up: %s", log.String())
	}
}

// TestRedisSharesWindows checks that a window one node's upstream announced holds the
// other nodes' requests, and that a refusal says how long is left.
func TestRedisSharesWindows(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	var log testlog.Buffer
	nodes := newNodes(t, srv.URL, 2, &log)
	rate := limits.Rate{PerSecond: 100, Burst: 10}
	if _, ok := nodes[1].Take(ctx, "conn_gh", rate, 0); !ok {
		t.Fatal("node B: the first request was refused")
	}
	nodes[0].Block(ctx, "conn_gh", time.Minute)
	nodes[0].Block(ctx, "conn_gh", time.Second) // a shorter one later does not shorten it
	wait, ok := nodes[1].Take(ctx, "conn_gh", rate, 5*time.Second)
	if ok || wait < 50*time.Second || wait > time.Minute {
		t.Errorf("node B after node A's 60 s window: Take = %s, %v; want refused with 50–60 s left", wait, ok)
	}
	if wait, ok := nodes[1].Take(ctx, "conn_other", rate, 0); !ok || wait != 0 {
		t.Errorf("another connection: Take = %s, %v; want 0, true", wait, ok)
	}
	if nodes[0].Degraded() || nodes[1].Fallbacks() != 0 {
		t.Errorf("Degraded %v, Fallbacks %d with Redis up", nodes[0].Degraded(), nodes[1].Fallbacks())
	}
}

// TestRedisUnreachable stops Redis under three nodes: each falls back to a third of the
// burst (so together they stay within the limit), keeps the windows it recorded,
// logs the outage once, counts its fallbacks, and shares again once Redis is back.
func TestRedisUnreachable(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	var log testlog.Buffer
	nodes := newNodes(t, srv.URL, 3, &log)
	rate := limits.Rate{PerSecond: 100, Burst: 10}
	nodes[0].Block(ctx, "conn_blocked", time.Minute)
	srv.Stop()

	var asUpstreams []limits.Upstream
	for _, n := range nodes {
		asUpstreams = append(asUpstreams, n)
	}
	if got, want := takeAll(ctx, asUpstreams, "conn_fallback", 10), 3*(slow.Burst/3); got != want {
		t.Errorf("without Redis three nodes took %d tokens at once, want %d (a third of the burst each)", got, want)
	}
	if wait, ok := nodes[0].Take(ctx, "conn_blocked", rate, time.Second); ok || wait < 50*time.Second {
		t.Errorf("the window node A recorded before the outage: Take = %s, %v; want refused with about a minute left", wait, ok)
	}
	for i, n := range nodes {
		if !n.Degraded() || n.Fallbacks() == 0 {
			t.Errorf("node %d: Degraded %v, Fallbacks %d; want true and more than 0", i, n.Degraded(), n.Fallbacks())
		}
	}
	if got := strings.Count(log.String(), "redis is unreachable"); got != 3 {
		t.Errorf("the outage was logged %d times by three nodes, want once each:\n%s", got, log.String())
	}
	if strings.Contains(log.String(), srv.URL) {
		t.Errorf("the log names Redis's URL (which may hold its password):\n%s", log.String())
	}

	// Redis back (on the same address, empty): a node that tries it shares again.
	redistest.StartAt(t, srv.Addr)
	back, err := limits.NewRedis(limits.RedisOptions{URL: srv.URL, Nodes: func() int { return 3 }, Timeout: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	// The restarted server answers before the burst is tried: a round trip that fails
	// while it starts would put the node on its own share, which is not what this checks.
	testwait.Until(t, "the restarted redis-server to answer a take", func() bool {
		before := back.Fallbacks()
		back.Take(ctx, "conn_warm", limits.Rate{PerSecond: 1000, Burst: 1000}, 0)
		return back.Fallbacks() == before
	})
	if got := takeAll(ctx, []limits.Upstream{back, back, back}, "conn_back", 10); got != slow.Burst {
		t.Errorf("with Redis back: %d tokens, want the whole burst %d (fallbacks %d; log:\n%s)", got, slow.Burst, back.Fallbacks(), log.String())
	}
}

// TestRedisSlots checks the bound on concurrent holders across nodes, and the
// fallback to a node's share of it.
func TestRedisSlots(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	var log testlog.Buffer
	nodes := newNodes(t, srv.URL, 2, &log)
	type try struct {
		node   int
		op     string // acquire or release
		holder string
		want   bool
	}
	steps := []try{
		{0, "acquire", "run_1", true},
		{1, "acquire", "run_2", true},
		{1, "acquire", "run_3", false}, // two held, on two nodes
		{0, "acquire", "run_1", true},  // a holder keeps its slot
		{0, "release", "run_1", true},
		{1, "acquire", "run_3", true},
		{0, "acquire", "run_4", false},
	}
	for i, s := range steps {
		switch s.op {
		case "acquire":
			if got := nodes[s.node].Acquire(ctx, "tenant_1", s.holder, 2, time.Minute); got != s.want {
				t.Errorf("step %d: node %d Acquire(%s) = %v, want %v", i, s.node, s.holder, got, s.want)
			}
		case "release":
			nodes[s.node].Release(ctx, "tenant_1", s.holder)
		}
	}
	if !nodes[0].Acquire(ctx, "tenant_2", "run_9", 2, time.Minute) {
		t.Error("another tenant's slots are full")
	}
	// A slot whose holder stopped renewing frees itself when its ttl runs out.
	nodes[0].Renew(ctx, "tenant_1", "run_2", time.Millisecond)
	testwait.Until(t, "the slot renewed for 1 ms to free itself", func() bool {
		return nodes[0].Acquire(ctx, "tenant_1", "run_5", 2, time.Minute)
	})

	// Without Redis each of the two nodes holds half the bound: one slot here.
	srv.Stop()
	if !nodes[1].Acquire(ctx, "tenant_3", "run_6", 2, time.Minute) {
		t.Error("without Redis: the node's first slot was refused")
	}
	if nodes[1].Acquire(ctx, "tenant_3", "run_7", 2, time.Minute) {
		t.Error("without Redis: a node took more than its half of the bound")
	}
	nodes[1].Release(ctx, "tenant_3", "run_6")
	if !nodes[1].Acquire(ctx, "tenant_3", "run_7", 2, time.Minute) {
		t.Error("without Redis: a released slot was not free again")
	}
}

// TestRedisThatHangs gives the nodes a Redis that accepts connections and never
// answers (a network partition, a stuck server): each decision falls back to the
// node's share after the round trip's timeout, as with a refused connection.
func TestRedisThatHangs(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	var log testlog.Buffer
	r, err := limits.NewRedis(limits.RedisOptions{URL: "redis://" + l.Addr().String() + "/0", Nodes: func() int { return 2 },
		Timeout: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	if got, want := takeAll(ctx, []limits.Upstream{r}, "conn_hung", 10), slow.Burst/2; got != want {
		t.Errorf("with a hung Redis a node of two took %d tokens at once, want %d (half the burst)", got, want)
	}
	if !r.Degraded() || !strings.Contains(log.String(), "redis is unreachable") {
		t.Errorf("Degraded %v, log %q; want the outage noted", r.Degraded(), log.String())
	}
}
