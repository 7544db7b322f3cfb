package limits_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/redistest"
	"github.com/switchboard-hub/switchboard/limits"
)

// BenchmarkUpstreamTake measures what taking a connection's rate-limit token costs a
// call: in process (one node), and through a redis-server on loopback (the script's
// round trip), the cost of sharing the limit with a fleet.
func BenchmarkUpstreamTake(b *testing.B) {
	srv := redistest.Start(b)
	r, err := limits.NewRedis(limits.RedisOptions{URL: srv.URL, Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rate := limits.Rate{PerSecond: 1e9, Burst: 1 << 30}
	for _, tc := range []struct {
		name string
		u    limits.Upstream
	}{{"local", limits.NewLocal()}, {"redis", r}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, ok := tc.u.Take(ctx, "conn_bench", rate, time.Second); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}
