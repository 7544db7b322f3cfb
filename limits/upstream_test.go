package limits_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/limits"
)

// step is one action on an Upstream's key and what it must answer.
type step struct {
	advance  time.Duration // the clock moves this much first
	block    time.Duration // record an announced window instead of taking
	forget   bool          // forget the key instead of taking
	maxWait  time.Duration
	wantWait time.Duration
	wantOK   bool
}

// TestLocalTake follows the bucket of one key through sequences of requests: a burst
// goes at once, the next waits one interval (or is refused when that is longer than
// the caller waits), a window the upstream announced holds every request until it
// ends, and a forgotten key starts full.
func TestLocalTake(t *testing.T) {
	t.Parallel()
	tenPerSecond := limits.Rate{PerSecond: 10, Burst: 2}
	tests := []struct {
		name  string
		rate  limits.Rate
		steps []step
	}{
		{name: "burst then one interval", rate: tenPerSecond, steps: []step{
			{maxWait: time.Second, wantOK: true},
			{maxWait: time.Second, wantOK: true},
			{maxWait: time.Second, wantOK: true, wantWait: 100 * time.Millisecond},
			{maxWait: time.Second, wantOK: true, wantWait: 200 * time.Millisecond},
		}},
		{name: "refused when the wait is too long, and nothing taken", rate: tenPerSecond, steps: []step{
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantWait: 100 * time.Millisecond},
			{maxWait: 0, wantWait: 100 * time.Millisecond},
			{advance: 100 * time.Millisecond, maxWait: 0, wantOK: true},
		}},
		{name: "tokens come back with time", rate: tenPerSecond, steps: []step{
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
			{advance: time.Second, maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantWait: 100 * time.Millisecond},
		}},
		{name: "an announced window holds every request", rate: tenPerSecond, steps: []step{
			{block: 30 * time.Second},
			{maxWait: 5 * time.Second, wantWait: 30 * time.Second},
			{advance: 26 * time.Second, maxWait: 5 * time.Second, wantOK: true, wantWait: 4 * time.Second},
			{maxWait: 5 * time.Second, wantOK: true, wantWait: 4 * time.Second},
			{maxWait: 5 * time.Second, wantOK: true, wantWait: 4*time.Second + 100*time.Millisecond},
		}},
		{name: "a shorter window does not shorten a longer one", rate: tenPerSecond, steps: []step{
			{block: time.Minute},
			{block: time.Second},
			{maxWait: 5 * time.Second, wantWait: time.Minute},
		}},
		{name: "no bucket: only windows", rate: limits.Rate{}, steps: []step{
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
			{block: 2 * time.Second},
			{maxWait: time.Second, wantWait: 2 * time.Second},
			{maxWait: 3 * time.Second, wantOK: true, wantWait: 2 * time.Second},
		}},
		{name: "forget starts a full bucket", rate: tenPerSecond, steps: []step{
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
			{block: time.Minute},
			{forget: true},
			{maxWait: 0, wantOK: true},
			{maxWait: 0, wantOK: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			l := limits.LocalWithClock(clk.Now)
			ctx := context.Background()
			for i, s := range tc.steps {
				clk.advance(s.advance)
				switch {
				case s.block > 0:
					l.Block(ctx, "conn_1", s.block)
					continue
				case s.forget:
					l.Forget(ctx, "conn_1")
					continue
				}
				wait, ok := l.Take(ctx, "conn_1", tc.rate, s.maxWait)
				if diff := cmp.Diff(step{wantWait: s.wantWait, wantOK: s.wantOK}, step{wantWait: wait, wantOK: ok}, cmp.AllowUnexported(step{})); diff != "" {
					t.Errorf("step %d: Take (-want +got):\n%s", i, diff)
				}
			}
			// Another key is untouched by all of it.
			if wait, ok := l.Take(ctx, "conn_2", tc.rate, 0); !ok || wait != 0 {
				t.Errorf("another key: Take = %s, %v; want 0, true", wait, ok)
			}
		})
	}
}
