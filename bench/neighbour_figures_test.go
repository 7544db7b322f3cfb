package bench

import (
	"testing"
	"time"
)

// neighbourFigures are what both noisy-neighbour benchmarks (closed loop and by rate)
// measure and report alike: the quiet tenant's latency alone and beside the noisy one,
// as its callers see it and inside the hub's handler, the worst pair's ratio of p99s,
// each tenant's throughput and refusals by reason, and the hub's CPU.
type neighbourFigures struct {
	secs                    float64 // the length of each half, over all pairs
	quietAlone, quietBeside []time.Duration
	// the same calls' time in the hub's handler (see handlerLatency)
	quietAloneHub, quietBesideHub []time.Duration
	worst                         float64 // the worst pair's ratio of p99s
	noisyAnswered                 int
	noisyRefused                  *refusals
	quietRefused                  refusals // the quiet tenant's, both halves (with calls the benchmark dropped)
	aloneCPU, besideCPU           time.Duration
}

func (f *neighbourFigures) report(b *testing.B) {
	b.ReportMetric(micros(pct(f.quietAlone, 0.50)), "quiet-alone-p50-µs")
	b.ReportMetric(micros(pct(f.quietAlone, 0.99)), "quiet-alone-p99-µs")
	b.ReportMetric(micros(pct(f.quietBeside, 0.50)), "quiet-beside-p50-µs")
	b.ReportMetric(micros(pct(f.quietBeside, 0.99)), "quiet-beside-p99-µs")
	b.ReportMetric(float64(pct(f.quietBeside, 0.99))/float64(pct(f.quietAlone, 0.99)), "p99-ratio")
	b.ReportMetric(f.worst, "worst-pair-p99-ratio")
	b.ReportMetric(micros(pct(f.quietAloneHub, 0.99)), "quiet-alone-hub-p99-µs")
	b.ReportMetric(micros(pct(f.quietBesideHub, 0.99)), "quiet-beside-hub-p99-µs")
	b.ReportMetric(float64(pct(f.quietBesideHub, 0.99))/float64(pct(f.quietAloneHub, 0.99)), "hub-p99-ratio")
	b.ReportMetric(float64(len(f.quietAlone))/f.secs, "quiet-alone-calls/s")
	b.ReportMetric(float64(len(f.quietBeside))/f.secs, "quiet-beside-calls/s")
	b.ReportMetric(float64(f.noisyAnswered)/f.secs, "noisy-calls/s")
	f.noisyRefused.report(b, "noisy", f.secs)
	// A refused quiet call would leave its latency out of the figures: the count, not a rate.
	b.ReportMetric(float64(f.quietRefused.total()), "quiet-refused")
	for _, reason := range f.quietRefused.reasons() {
		b.ReportMetric(float64(f.quietRefused.of(reason)), "quiet-refused-"+reason)
	}
	b.ReportMetric(f.aloneCPU.Seconds()/f.secs, "hub-cores-alone")
	b.ReportMetric(f.besideCPU.Seconds()/f.secs, "hub-cores-beside")
}
