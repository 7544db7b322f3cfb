package audit_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// BenchmarkCommit is the audit half of a tools/call under load, on SQLite: callers
// goroutines each Commit tool-call events, as the router does, into a table that already
// holds 100,000 rows (a hub's table is never empty, and a b-tree insert costs more the
// deeper and wider the tree). Reported: the process CPU per row, which is what the
// writer costs the hub, and rows/s.
func BenchmarkCommit(b *testing.B) {
	for _, callers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			db := testdb.SQLite(b)
			tenant := addTenant(b, db, "ten_bench")
			ctx := context.Background()
			event := func() audit.Event {
				return audit.Event{TenantID: tenant, Kind: audit.KindToolCall, Principal: "user:usr_01jbench0000000000000000", KeyID: "key_01jbench0000000000000000",
					Tool: "github_get_issue", ConnectionID: "con_01jbench0000000000000000", Outcome: "ok", UpstreamStatus: 200, LatencyMicros: 1234,
					ArgsHash: "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"}
			}
			// The table's rows go in batches of 16, a few minutes of a busy hub's.
			fill := audit.NewWriter(db, audit.WriterOptions{BatchSize: 16})
			for range 100_000 {
				fill.Record(event())
			}
			if err := fill.Close(ctx); err != nil {
				b.Fatal(err)
			}
			w := audit.NewWriter(db, audit.WriterOptions{})
			defer w.Close(ctx)
			n := max(b.N, 1000)
			b.ResetTimer()
			cpu0 := processCPU(b)
			start := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failed error
			for g := range callers {
				wg.Go(func() {
					for i := g; i < n; i += callers {
						if err := w.Commit(ctx, event()); err != nil {
							mu.Lock()
							failed = err
							mu.Unlock()
							return
						}
					}
				})
			}
			wg.Wait()
			wall := time.Since(start)
			cpu := processCPU(b) - cpu0
			b.StopTimer()
			if failed != nil {
				b.Fatal(failed)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n), "cpu-µs/row")
			b.ReportMetric(float64(n)/wall.Seconds(), "rows/s")
		})
	}
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
