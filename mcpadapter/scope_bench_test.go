package mcpadapter

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// BenchmarkScopeBuild measures what the server-per-scope design costs: building one
// principal's MCP server with 300 tools (done on first use and on each connection
// change), and the heap one such scope holds.
func BenchmarkScopeBuild(b *testing.B) {
	reg := providers.NewRegistry()
	ops := make([]providers.Op, 300)
	for i := range ops {
		ops[i] = &providers.Operation[noteIn, noteOut]{Name: fmt.Sprintf("op_%03d", i), Title: "Op", Description: "A synthetic operation.", Hints: providers.Hints{ReadOnly: true}}
	}
	if err := reg.Register(providers.Spec{Name: "bulk", Title: "Bulk", Verify: notesSpec().Verify, Operations: ops}); err != nil {
		b.Fatal(err)
	}
	conns := &memConns{}
	conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "bulk", AccountLabel: "a", Status: connections.StatusActive})
	a := New(Options{Router: router.New(router.Options{Registry: reg, Connections: conns})})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	scopes := make([]*scope, 0, b.N)
	b.ResetTimer()
	for range b.N {
		s := a.newScope(alice, "")
		if err := s.refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
		scopes = append(scopes, s)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N)/1024, "KiB-heap/scope")
	for _, s := range scopes {
		s.close(context.Background())
	}
}
