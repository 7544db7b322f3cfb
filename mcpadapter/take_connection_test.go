package mcpadapter

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboard-hub/switchboard/router"
)

// manyConnections are n connections of one provider, as a caller with n accounts has.
func manyConnections(n int) *router.ConnectionIndex {
	refs := make([]router.ConnectionRef, n)
	for i := range refs {
		refs[i] = router.ConnectionRef{ID: fmt.Sprintf("con_%04d", i), Label: fmt.Sprintf("account %04d", i), Account: fmt.Sprintf("account %04d", i)}
	}
	return router.NewConnectionIndex(refs)
}

// TestTakeConnectionCostIsFlat: taking the connection argument off a call costs the
// same allocations whether the caller has 2 connections or 200, so a call does not pay
// for every account its caller holds (quoting each label on every call did).
func TestTakeConnectionCostIsFlat(t *testing.T) {
	allocs := func(n int) float64 {
		conns := manyConnections(n)
		args := json.RawMessage(fmt.Sprintf(`{"connection":"account %04d","owner":"octocat","repo":"Hello-World","issue_number":1347}`, n-1))
		return testing.AllocsPerRun(200, func() {
			_, id, err := takeConnection(args, conns)
			if err != nil || id != fmt.Sprintf("con_%04d", n-1) {
				t.Fatalf("takeConnection = %q, %v", id, err)
			}
		})
	}
	// The race detector's instrumentation adds or spares an allocation now and then, so
	// the figures may differ by that; a cost per connection would add 198.
	few, many := allocs(2), allocs(200)
	if many > few+2 {
		t.Fatalf("allocations per call: %v with 2 connections, %v with 200; want the same", few, many)
	}
}

// BenchmarkTakeConnection measures taking the connection argument off a call for a
// caller with 1 and with 200 connections of the tool's provider; the figures match.
func BenchmarkTakeConnection(b *testing.B) {
	for _, n := range []int{1, 200} {
		b.Run(fmt.Sprintf("connections=%d", n), func(b *testing.B) {
			conns := manyConnections(n)
			args := json.RawMessage(fmt.Sprintf(`{"connection":"account %04d","owner":"octocat","repo":"Hello-World","issue_number":1347}`, n-1))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := takeConnection(args, conns); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
