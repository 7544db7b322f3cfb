package limits

import (
	"testing"
	"time"
)

// TestDemandRate: a tenant's rate is the calls of the last second, those of the window
// before counted for the share of it the last second still covers; a tenant that has
// not asked for a second is no longer active.
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
		{900, 10, true},
		{1250, 7.5, true}, // a quarter of the first window is over
		{1450, 5.5, true}, // 450 ms since the last call
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
