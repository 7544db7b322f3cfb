package telemetry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestRefusalsCount: calls refused before they ran are counted by scope and reason
// (they leave no audit row); without metrics the counter is a no-op.
func TestRefusalsCount(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := telemetry.NewRefusals(m)
	if err != nil {
		t.Fatal(err)
	}
	r.Refused("node", "wait_exceeded")
	r.Refused("node", "wait_exceeded")
	r.Refused("tenant", "queue_full")
	want := map[string]float64{
		`switchboard_tool_calls_refused_total{reason="wait_exceeded",scope="node"}`: 2,
		`switchboard_tool_calls_refused_total{reason="queue_full",scope="tenant"}`:  1,
	}
	if diff := cmp.Diff(want, telemetrytest.Samples(t, reg, "switchboard_tool_calls_refused")); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	var off *telemetry.Refusals
	off.Refused("node", "queue_full") // no metrics: nothing to count, and no panic
	if none, err := telemetry.NewRefusals(nil); none != nil || err != nil {
		t.Errorf("NewRefusals(nil) = %v, %v; want nil, nil", none, err)
	}
}
