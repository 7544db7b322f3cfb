package limits

import (
	"testing"
	"time"
)

// TestDemandRate: a tenant's rate is the calls of the last second, those of the window
// before counted for the share of it the last second still covers (within its first
// second, the calls over the time it has asked); a tenant that has not asked for a
// second is no longer active.
func TestDemandRate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	d := &demand{start: t0}
	for i := range 10 {
		d.ask(t0.Add(time.Duration(i) * 50 * time.Millisecond)) // 10 calls in the first half second
	}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		ms     int
		want   float64
		active bool
	}{
		{900, 11.11, true}, // 10 calls in the 900 ms it has asked
		{1250, 7.5, true},  // a quarter of the first window is over
		{1450, 5.5, true},  // 450 ms since the last call
		{1451, 5.49, false},
		{2100, 0, false},
	}
	for _, tt := range tests {
		if got := d.rate(at(tt.ms)); got < tt.want-0.011 || got > tt.want+0.011 {
			t.Errorf("rate at %d ms = %.3f, want %.2f", tt.ms, got, tt.want)
		}
		if got := d.active(at(tt.ms)); got != tt.active {
			t.Errorf("active at %d ms = %v, want %v", tt.ms, got, tt.active)
		}
	}
}

// TestDemandRateOfATenantJustBegun: a tenant that began asking 30 ms ago at 10,000 calls
// a second asks more than a neighbour that has asked 1,000 a second for two seconds,
// though it asked fewer calls over the last second; its first call alone does not make
// a rate of a thousand a second; and after two idle windows it is measured afresh.
func TestDemandRateOfATenantJustBegun(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	steady := &demand{start: t0}
	for i := range 2000 {
		steady.ask(at(i * 1000))
	}
	flood := &demand{start: at(1_970_000)}
	for i := range 300 {
		flood.ask(at(1_970_000 + i*100))
	}
	now := at(2_000_000)
	if s, f := steady.rate(now), flood.rate(now); f < 9000 || f > 11000 || s < 999 || s > 1001 {
		t.Errorf("rates: steady %.0f, flood %.0f; want 1,000 and about 10,000", s, f)
	}
	one := &demand{start: t0}
	one.ask(t0)
	if got := one.rate(t0); got != 100 {
		t.Errorf("a first call's rate = %.0f, want 100 (one call over a hundredth of a second)", got)
	}
	steady.ask(at(5_000_000)) // idle for three seconds: a new start
	if got := steady.rate(at(5_500_000)); got != 2 {
		t.Errorf("rate half a second after an idle tenant's call = %.2f, want 2", got)
	}
}
