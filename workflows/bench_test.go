package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
)

// instantCaller answers every call at once (or after delay): what remains of a run's
// time is the engine's own (expressions, sealing, the step records).
type instantCaller struct{ delay time.Duration }

func (c instantCaller) Execute(ctx context.Context, _ switchboard.Principal, _ router.Request) (any, error) {
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return map[string]any{"value": "v", "items": []string{}, "count": 0}, nil
}

func benchEngine(b *testing.B, delay time.Duration) (*Engine, switchboard.Principal) {
	db := testdb.SQLite(b)
	ten, _ := twoTenants(b, db)
	var hook flowHook
	cat := staticCatalog{reg: flowRegistry(b, &hook), conns: []router.ConnectionRef{{ID: "con_main", Label: "main", Account: "main"}}, tenant: ten}
	return NewEngine(EngineOptions{Store: NewStore(db, newKeyring(b)), Caller: instantCaller{delay}, Catalog: cat}),
		switchboard.Principal{TenantID: ten, Kind: switchboard.PrincipalUser, UserID: "usr_1"}
}

// chainDef is n steps, each reading the one before; wideDef is width chains of depth
// steps side by side.
func wideDef(width, depth, limit int) json.RawMessage {
	var b strings.Builder
	fmt.Fprintf(&b, "name: bench\nparallel_limit: %d\nsteps:\n", limit)
	for w := range width {
		for d := range depth {
			fmt.Fprintf(&b, "  - name: s%d_%d\n    tool: flow_read\n    args: {key: \"k-${{ params.x }}\"}\n", w, d)
			if d > 0 {
				fmt.Fprintf(&b, "    needs: [s%d_%d]\n", w, d-1)
			}
		}
	}
	def, err := Parse([]byte(b.String()))
	if err != nil {
		panic(err)
	}
	raw, _ := json.Marshal(def)
	return raw
}

// BenchmarkEngineStep measures the engine's own cost per step: a 100-step chain whose
// tool calls answer at once.
func BenchmarkEngineStep(b *testing.B) {
	eng, p := benchEngine(b, 0)
	def := wideDef(1, 100, 1)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		if _, err := eng.Execute(ctx, Run{ID: fmt.Sprintf("run_b%d", i), Principal: p, Input: RunInput{Workflow: "bench", Definition: def, Params: json.RawMessage(`{"x":1}`)}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*100), "µs/step")
}

// BenchmarkWorkflow100Steps runs 100 steps of 5 ms each as 10 chains of 10, at most
// 10 at once: the wall time against the 500 ms the steps take one after another.
func BenchmarkWorkflow100Steps(b *testing.B) {
	eng, p := benchEngine(b, 5*time.Millisecond)
	def := wideDef(10, 10, 10)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		if _, err := eng.Execute(ctx, Run{ID: fmt.Sprintf("run_w%d", i), Principal: p, Input: RunInput{Workflow: "bench", Definition: def, Params: json.RawMessage(`{"x":1}`)}}); err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(wall.Milliseconds()), "ms-wall")
	b.ReportMetric(500, "ms-sum-of-steps")
}
