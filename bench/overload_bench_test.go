package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/connections"
)

// outcome is one closed-loop caller's record: latencies of answered calls, and
// refusals by reason.
type outcome struct {
	answered []time.Duration
	refused  map[string]int
}

// callOrRefusal makes one tools/call: an answer, a refusal with its advice and its
// reason (see refusalReason), or a failure (anything else, which fails the benchmark:
// every call must be one of the two).
func (s *session) callOrRefusal() (refusedFor time.Duration, reason string, err error) {
	call := s.call
	if call == "" {
		call = `{"name":"github_get_issue","arguments":{"owner":"octocat","repo":"Hello-World","issue_number":1347}}`
	}
	res, err := s.rpc("tools/call", call)
	if hr := (*httpRefusal)(nil); errors.As(err, &hr) {
		// Refused at the door, before the request was read: its advice is the header's.
		secs, cerr := strconv.Atoi(hr.retryAfter)
		if cerr != nil || secs <= 0 || !refusal.Match(hr.body) {
			return 0, "", fmt.Errorf("refusal without a usable Retry-After: %w", err)
		}
		return time.Duration(secs) * time.Second, refusalReason(hr.body), nil
	}
	if err != nil {
		return 0, "", err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) {
		m := refusal.FindSubmatch(res)
		if m == nil {
			return 0, "", fmt.Errorf("tool call failed without a Retry-After: %s", res)
		}
		secs, _ := strconv.Atoi(string(m[1]))
		return time.Duration(secs) * time.Second, refusalReason(res), nil
	}
	if !bytes.Contains(res, []byte(`"structuredContent"`)) {
		return 0, "", fmt.Errorf("tool call answered without its result: %s", res)
	}
	return 0, "", nil
}

// closedLoop runs callers that each call again as soon as answered, for d; a refused
// caller waits as advised (bounded by what is left of d), as a well-behaved client does.
func closedLoop(b *testing.B, sessions []*session, d time.Duration) ([]outcome, time.Duration) {
	b.Helper()
	outs := make([]outcome, len(sessions))
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, s := range sessions {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t0 := time.Now()
				wait, reason, err := s.callOrRefusal()
				if err != nil {
					failed.Store(err)
					return
				}
				if wait > 0 {
					if outs[i].refused == nil {
						outs[i].refused = map[string]int{}
					}
					outs[i].refused[reason]++
					time.Sleep(min(wait, time.Until(deadline)))
					continue
				}
				outs[i].answered = append(outs[i].answered, time.Since(t0))
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return outs, time.Since(start)
}

// merge pools the callers' outcomes: the latencies of answered calls, refusals by reason.
func merge(outs []outcome) ([]time.Duration, map[string]int) {
	var lat []time.Duration
	refused := map[string]int{}
	for _, o := range outs {
		lat = append(lat, o.answered...)
		for reason, n := range o.refused {
			refused[reason] += n
		}
	}
	return lat, refused
}

// overloadWindow is how long each closed-loop measurement lasts.
const overloadWindow = 3 * time.Second

// BenchmarkOverload drives github_get_issue through the hub (admission control with its
// defaults, every audit row committed before its answer), in a process of its own, with
// 16, 64, 256 and 1,024 closed-loop callers. The caller counts take turns in windows
// of three seconds, three rounds of each per iteration, so that every count sees the
// same load on the machine. Reported per count: answered calls per second, their p50
// and p99, the calls refused with Retry-After, the hub's CPU time per answered call;
// and the throughput at 256 and 1,024 callers as a share of 64's, over all rounds and
// in the worst round.
func BenchmarkOverload(b *testing.B) {
	const rounds = 3
	counts := []int{16, 64, 256, 1024}
	if only, err := strconv.Atoi(os.Getenv("SWITCHBOARD_BENCH_CALLERS")); err == nil {
		counts = []int{only} // one count alone, to profile the hub at it
	}
	hp := startHubProcess(b)
	h := hp.tenants[""]
	sessions := make([]*session, counts[len(counts)-1])
	for i := range sessions {
		sessions[i] = h.session(b)
	}
	closedLoop(b, sessions, time.Second) // warm up
	type tally struct {
		lat                   []time.Duration
		refused               refusals
		wall, cpu, clientsCPU time.Duration
	}
	all := make([]tally, len(counts))
	worst := map[int]float64{256: 1e9, 1024: 1e9}
	b.ResetTimer()
	for range b.N * rounds {
		rate := make([]float64, len(counts))
		for i, c := range counts {
			cpu0, self0 := hp.cpu(b), processCPU(b)
			outs, w := closedLoop(b, sessions[:c], overloadWindow)
			t := &all[i]
			t.cpu += hp.cpu(b) - cpu0
			t.clientsCPU += processCPU(b) - self0
			l, r := merge(outs)
			t.lat, t.wall = append(t.lat, l...), t.wall+w
			t.refused.addAll(r)
			rate[i] = float64(len(l)) / w.Seconds()
		}
		if len(counts) == 4 {
			worst[256] = min(worst[256], 100*rate[2]/rate[1])
			worst[1024] = min(worst[1024], 100*rate[3]/rate[1])
		}
	}
	b.StopTimer()
	rate := func(i int) float64 { return float64(len(all[i].lat)) / all[i].wall.Seconds() }
	for i, c := range counts {
		t := &all[i]
		b.ReportMetric(rate(i), fmt.Sprintf("c%d-answered/s", c))
		t.refused.report(b, fmt.Sprintf("c%d", c), t.wall.Seconds())
		b.ReportMetric(micros(pct(t.lat, 0.50)), fmt.Sprintf("c%d-p50-µs", c))
		b.ReportMetric(micros(pct(t.lat, 0.99)), fmt.Sprintf("c%d-p99-µs", c))
		b.ReportMetric(micros(t.cpu/time.Duration(max(len(t.lat), 1))), fmt.Sprintf("c%d-hub-cpu-µs/answered", c))
		// The callers' and the fake upstream's, in this process: what the hub competes with.
		b.ReportMetric(micros(t.clientsCPU/time.Duration(max(len(t.lat), 1))), fmt.Sprintf("c%d-bench-cpu-µs/answered", c))
	}
	if len(counts) == 4 {
		b.ReportMetric(100*rate(2)/rate(1), "c256-vs-c64-%")
		b.ReportMetric(100*rate(3)/rate(1), "c1024-vs-c64-%")
		b.ReportMetric(worst[256], "worst-round-c256-vs-c64-%")
		b.ReportMetric(worst[1024], "worst-round-c1024-vs-c64-%")
	}
}

// envNoisyCallers sets BenchmarkNoisyNeighbour's count of noisy callers.
const envNoisyCallers = "SWITCHBOARD_BENCH_NOISY_CALLERS"

// neighbourWindow is how long each half of a noisy-neighbour pair lasts.
const neighbourWindow = 5 * time.Second

// BenchmarkNoisyNeighbour measures a quiet tenant's latency alone, then beside a
// tenant with ten times as many closed-loop callers, each caller pausing thinkTime
// between calls (a tenant's load is its rate of calls) and waiting as advised when
// refused. The hub runs in a process of its own. Each iteration is three pairs, alone
// then beside, interleaved so that both halves see the same load on the machine;
// reported are the quiet tenant's p50 and p99 over all three of each, the worst pair's
// ratio of p99s, and the hub's CPU time in each. SWITCHBOARD_BENCH_NOISY_CALLERS sets
// how many callers the noisy tenant has instead (the quiet tenant's p99 against how much
// its neighbour is answered).
func BenchmarkNoisyNeighbour(b *testing.B) {
	const quietCallers, thinkTime, pairs = 8, 5 * time.Millisecond, 3
	noisyCallers := 10 * quietCallers
	if v := os.Getenv(envNoisyCallers); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a whole number of callers, 1 or more", envNoisyCallers, v)
		}
		noisyCallers = n
	}
	hp := startHubProcess(b, "noisy")
	h, noisy := hp.tenants[""], hp.tenants["noisy"]
	quiet := make([]*session, quietCallers)
	for i := range quiet {
		quiet[i] = h.session(b)
	}
	loud := make([]*session, noisyCallers)
	for i := range loud {
		loud[i] = noisy.session(b)
	}
	run := func(b *testing.B, ss []*session, stop <-chan struct{}, lat *[]time.Duration, refused *refusals) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, s := range ss {
			wg.Go(func() {
				var mine []time.Duration
				for {
					select {
					case <-stop:
						mu.Lock()
						*lat = append(*lat, mine...)
						mu.Unlock()
						return
					case <-time.After(thinkTime):
					}
					t0 := time.Now()
					wait, reason, err := s.callOrRefusal()
					if err != nil {
						b.Error(err)
						return
					}
					if wait > 0 {
						// Refused: wait as advised, as a well-behaved client does.
						refused.add(reason)
						select {
						case <-stop:
						case <-time.After(wait):
						}
						continue
					}
					mine = append(mine, time.Since(t0))
				}
			})
		}
		wg.Wait()
	}
	type half struct {
		quiet, loud                []time.Duration
		quietHub                   []time.Duration // the quiet calls' time in the hub's handler
		quietRefused, noisyRefused refusals
		cpu                        time.Duration
	}
	measure := func(b *testing.B, withNoise bool, into *half) (quietLat []time.Duration) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var loudLat []time.Duration
		cpu0 := hp.cpu(b)
		h.handlerLatencies(b) // forget what came before this half
		if withNoise {
			wg.Go(func() { run(b, loud, stop, &loudLat, &into.noisyRefused) })
		}
		wg.Go(func() { run(b, quiet, stop, &quietLat, &into.quietRefused) })
		time.Sleep(neighbourWindow)
		close(stop)
		wg.Wait()
		into.cpu += hp.cpu(b) - cpu0
		into.quietHub = append(into.quietHub, h.handlerLatencies(b)...)
		into.quiet = append(into.quiet, quietLat...)
		into.loud = append(into.loud, loudLat...)
		return quietLat
	}
	var alone, beside half
	worst := 0.0
	b.ResetTimer()
	for range b.N {
		for range pairs {
			a := measure(b, false, &alone)
			n := measure(b, true, &beside)
			worst = max(worst, float64(pct(n, 0.99))/float64(pct(a, 0.99)))
		}
	}
	b.StopTimer()
	f := neighbourFigures{secs: float64(b.N*pairs) * neighbourWindow.Seconds(), quietAlone: alone.quiet, quietBeside: beside.quiet,
		worst: worst, noisyAnswered: len(beside.loud), noisyRefused: &beside.noisyRefused, aloneCPU: alone.cpu, besideCPU: beside.cpu,
		quietAloneHub: alone.quietHub, quietBesideHub: beside.quietHub}
	f.quietRefused.addAll(alone.quietRefused.byReason)
	f.quietRefused.addAll(beside.quietRefused.byReason)
	f.report(b)
}

// secondTenant makes another tenant with its own owner, key and GitHub connection on
// the same hub, and returns the hub as that tenant's callers see it.
func (h *hub) secondTenant(b *testing.B, slug string) *hub {
	b.Helper()
	other, err := h.newTenant(slug)
	if err != nil {
		b.Fatal(err)
	}
	return other
}

// newTenant is secondTenant for goroutines other than the benchmark's, which may not
// call b.Fatal.
func (h *hub) newTenant(slug string) (*hub, error) {
	ctx := context.Background()
	tenant, _, key, _, err := h.tenants.CreateTenantWithOwner(ctx, slug, slug, "owner@"+slug+".example")
	if err != nil {
		return nil, err
	}
	p, err := h.tenants.Authenticate(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := h.conns.Connect(ctx, p, connections.ConnectInput{Provider: "github", Token: "ghp_benchmarktoken2"}); err != nil {
		return nil, err
	}
	other := *h
	other.mcpURL = h.base + "/mcp/" + tenant.Slug
	other.key = key
	return &other, nil
}
