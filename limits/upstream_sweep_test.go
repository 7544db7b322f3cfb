package limits_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/limits"
)

// TestLocalSweepsFreshKeys: keys named by client addresses come and go; a Local drops
// those whose bucket is full again once it holds many, and keeps the ones still
// limited, so the map stays bounded and no limit is forgotten early.
func TestLocalSweepsFreshKeys(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := limits.LocalWithClock(c.Now)
	ctx := context.Background()
	r := limits.Rate{PerSecond: 1, Burst: 1}
	for i := range 5000 {
		if _, ok := l.Take(ctx, fmt.Sprintf("addr-%d", i), r, 0); !ok {
			t.Fatalf("key %d refused on its first take", i)
		}
	}
	// One key stays limited: its next token is an hour away.
	slow := limits.Rate{PerSecond: 1.0 / 3600, Burst: 1}
	if _, ok := l.Take(ctx, "busy", slow, 0); !ok {
		t.Fatal("busy refused on its first take")
	}
	c.advance(2 * time.Second) // every addr-N bucket is full again
	for i := range 4000 {
		if _, ok := l.Take(ctx, fmt.Sprintf("later-%d", i), r, 0); !ok {
			t.Fatalf("later key %d refused on its first take", i)
		}
	}
	// A sweep ran once the map doubled: the 5000 fresh addr-N keys are gone.
	if n := limits.LocalKeys(l); n > 4001 {
		t.Errorf("the Local holds %d keys, want at most the 4000 later keys and busy: the fresh ones swept", n)
	}
	if wait, ok := l.Take(ctx, "busy", slow, 0); ok || wait < 59*time.Minute {
		t.Errorf("busy after the sweep: ok %v, wait %v; want refused for about an hour", ok, wait)
	}
}
