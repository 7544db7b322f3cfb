package bench

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// envQuietShare sets BenchmarkNoisyNeighbourRate's quiet rate as a share of the
// measured capacity (default 0.1; the noisy tenant always asks ten times as much).
const envQuietShare = "SWITCHBOARD_BENCH_QUIET_SHARE"

// BenchmarkNoisyNeighbourRate is the noisy neighbour with loads set by rate rather than
// by callers: the hub's capacity C is measured first (64 closed-loop callers of the
// noisy tenant, 3 s), then the quiet tenant sends C/10 calls a second and the noisy
// tenant ten times as many (C, so that beside each other the node is asked for 110% of
// what it can do), each call on its own, whenever it is due, whatever the earlier ones
// are doing (open loop, as independent agents do). Three pairs, alone then beside,
// interleaved; reported as BenchmarkNoisyNeighbour's figures, plus C. In
// BenchmarkNoisyNeighbour the quiet tenant's own load is near half of what the hub
// gets on a loaded machine; here it is a tenth of it however loaded the machine is.
// envQuietShare sets a smaller quiet share, so the same tenfold neighbour can be
// measured with the node less than full (0.05: 55% of C asked for in all).
// envUpstreamDelay makes GitHub take time to answer, as it does, so that the hub's part
// of the quiet tenant's time is measured beside GitHub's own.
func BenchmarkNoisyNeighbourRate(b *testing.B) {
	noisyNeighbourRate(b)
}

// gitHubPace is how long the fake GitHub takes to answer in
// BenchmarkNoisyNeighbourGitHubPace: on the fast side of what GitHub's REST API takes
// (tens to hundreds of milliseconds), so the hub's own share of a call is as large as
// it gets with a real upstream.
const gitHubPace = "50ms"

// BenchmarkNoisyNeighbourGitHubPace is BenchmarkNoisyNeighbourRate with the fake
// GitHub answering in gitHubPace unless envUpstreamDelay says otherwise: the noisy
// neighbour as tenants meet it, where each call waits for GitHub. With GitHub answering
// at once, the two tenants' calls are nothing but the hub's work on two cores shared
// with the callers and the fake, and the quiet tenant's tail is their scheduling.
func BenchmarkNoisyNeighbourGitHubPace(b *testing.B) {
	if os.Getenv(envUpstreamDelay) == "" {
		b.Setenv(envUpstreamDelay, gitHubPace)
	}
	noisyNeighbourRate(b)
}

func noisyNeighbourRate(b *testing.B) {
	const pairs = 3
	delay := upstreamDelay(b)
	maxOutstanding := int64(256)
	if delay > 0 {
		maxOutstanding = 4096 // calls stay outstanding for GitHub's time
	}
	if n, err := strconv.Atoi(os.Getenv("SWITCHBOARD_BENCH_OUTSTANDING")); err == nil {
		maxOutstanding = int64(n)
	}
	share := 0.1
	if v := os.Getenv(envQuietShare); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 0.1 {
			b.Fatalf("%s=%q: want the quiet tenant's share of the capacity, above 0 and at most 0.1", envQuietShare, v)
		}
		share = f
	}
	hp := startHubProcess(b, "noisy")
	h, noisy := hp.tenants[""], hp.tenants["noisy"]
	quiet := make([]*session, 8)
	for i := range quiet {
		quiet[i] = h.session(b)
	}
	loud := make([]*session, 80)
	for i := range loud {
		loud[i] = noisy.session(b)
	}
	// Capacity is measured with 64 callers; when GitHub takes time to answer
	// (envUpstreamDelay), with 1,024 (the noisy tenant's sessions, each used by several),
	// enough to keep the node's calls under way at their bound.
	callers := loud[:64]
	if delay > 0 {
		callers = make([]*session, 1024)
		for i := range callers {
			callers[i] = loud[i%len(loud)]
		}
	}
	closedLoop(b, callers, time.Second) // warm up
	outs, wall := closedLoop(b, callers, 3*time.Second)
	lat, _ := merge(outs)
	capacity := float64(len(lat)) / wall.Seconds()
	quietRate := capacity * share

	type tally struct {
		lat     []time.Duration
		refused refusals
		dropped atomic.Int64
		mu      sync.Mutex
	}
	// send calls at rate a second from ss in turn for d, each in its own goroutine;
	// a call due while maxOutstanding of the tenant's are outstanding is dropped (counted).
	send := func(ss []*session, rate float64, d time.Duration, into *tally, wg *sync.WaitGroup) {
		var outstanding atomic.Int64
		start := time.Now()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		issued := 0
		for now := range tick.C {
			if now.Sub(start) >= d {
				return
			}
			for due := int(now.Sub(start).Seconds() * rate); issued < due; issued++ {
				if outstanding.Load() >= maxOutstanding {
					into.dropped.Add(1)
					continue
				}
				s := ss[issued%len(ss)]
				outstanding.Add(1)
				wg.Go(func() {
					defer outstanding.Add(-1)
					t0 := time.Now()
					wait, reason, err := s.callOrRefusal()
					if err != nil {
						b.Error(err)
						return
					}
					if wait > 0 {
						into.refused.add(reason)
						return
					}
					into.mu.Lock()
					into.lat = append(into.lat, time.Since(t0))
					into.mu.Unlock()
				})
			}
		}
	}
	var alone, beside, noisyBeside tally
	var aloneCPU, besideCPU time.Duration
	var aloneHub, besideHub []time.Duration // the quiet calls' time in the hub's handler
	worst := 0.0
	b.ResetTimer()
	for range b.N {
		for range pairs {
			var wg sync.WaitGroup
			before := len(alone.lat)
			cpu0 := hp.cpu(b)
			h.handlerLatencies(b) // forget what came before this half
			send(quiet, quietRate, neighbourWindow, &alone, &wg)
			wg.Wait()
			aloneCPU += hp.cpu(b) - cpu0
			aloneHub = append(aloneHub, h.handlerLatencies(b)...)
			a := alone.lat[before:]

			before = len(beside.lat)
			cpu0 = hp.cpu(b)
			var bg sync.WaitGroup
			bg.Go(func() { send(loud, 10*quietRate, neighbourWindow, &noisyBeside, &wg) })
			send(quiet, quietRate, neighbourWindow, &beside, &wg)
			bg.Wait()
			wg.Wait()
			besideCPU += hp.cpu(b) - cpu0
			besideHub = append(besideHub, h.handlerLatencies(b)...)
			n := beside.lat[before:]
			worst = max(worst, float64(pct(n, 0.99))/float64(pct(a, 0.99)))
		}
	}
	b.StopTimer()
	f := neighbourFigures{secs: float64(b.N*pairs) * neighbourWindow.Seconds(), quietAlone: alone.lat, quietBeside: beside.lat,
		worst: worst, noisyAnswered: len(noisyBeside.lat), noisyRefused: &noisyBeside.refused, aloneCPU: aloneCPU, besideCPU: besideCPU,
		quietAloneHub: aloneHub, quietBesideHub: besideHub}
	f.quietRefused.addAll(alone.refused.byReason)
	f.quietRefused.addAll(beside.refused.byReason)
	f.quietRefused.addAll(map[string]int{"dropped": int(alone.dropped.Load() + beside.dropped.Load())})
	b.ReportMetric(capacity, "capacity-calls/s")
	b.ReportMetric(quietRate, "quiet-asked-calls/s")
	b.ReportMetric(float64(noisyBeside.dropped.Load()), "noisy-dropped")
	f.report(b)
}
