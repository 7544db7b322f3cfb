package runs

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// BenchmarkRunStartToOutput measures one run from Start to its recorded output (four
// writes: create, claim, complete, plus the router's call to the upstream fake) on
// SQLite, one at a time and with callers in parallel on one tenant (bounded to 4
// executing at once).
func BenchmarkRunStartToOutput(b *testing.B) {
	for _, bc := range []struct {
		name     string
		parallel bool
	}{{name: "serial"}, {name: "parallel"}} {
		b.Run(bc.name, func(b *testing.B) {
			r := newRig(b, testdb.SQLite(b), nil)
			ctx := context.Background()
			id := r.up.Put("bench")
			args := json.RawMessage(`{"id":"` + id + `"}`)
			one := func() {
				v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: args})
				if err != nil {
					b.Fatal(err)
				}
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				got, err := r.exec.Wait(wctx, r.ann, v.ID, 5*time.Millisecond)
				cancel()
				if err != nil || got.State != StateCompleted {
					b.Fatalf("run %s: %v %+v", v.ID, err, got.Error)
				}
			}
			b.ReportAllocs()
			if bc.parallel {
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						one()
					}
				})
				return
			}
			for b.Loop() {
				one()
			}
		})
	}
}
