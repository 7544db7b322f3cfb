package telemetry_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/telemetry"
)

// BenchmarkObserveToolCall measures what the metrics add to one tool call: the
// router's ObserveToolCall and the transport's ObserveUpstream, on label combinations
// already seen (the steady state).
func BenchmarkObserveToolCall(b *testing.B) {
	m, err := telemetry.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	tools := []string{"github_get_issue", "github_create_issue", "github_list_pulls", "github_search_code"}
	outcomes := []string{"ok", "ok", "ok", "rate_limited"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			m.ObserveToolCall(telemetry.ToolCall{
				Provider: "github", Tool: tools[i%len(tools)], Outcome: outcomes[i%len(outcomes)],
				Duration: 12 * time.Millisecond, Upstream: 10 * time.Millisecond,
			})
			m.ObserveUpstream("github", 200, 10*time.Millisecond)
		}
	})
}
