package telemetry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestAdmissionCallsReadOnScrape: the admission's gauge reports what its states say
// at each scrape, by state.
func TestAdmissionCallsReadOnScrape(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{"running": 8, "waiting": 3}
	if err := m.AdmissionCalls(func() map[string]int { return states }); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{`switchboard_admission_calls{state="running"}`: 8, `switchboard_admission_calls{state="waiting"}`: 3}
	if diff := cmp.Diff(want, telemetrytest.Samples(t, reg, "switchboard_admission_calls")); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	states = map[string]int{"running": 1, "upstream_slow": 2}
	want = map[string]float64{`switchboard_admission_calls{state="running"}`: 1, `switchboard_admission_calls{state="upstream_slow"}`: 2}
	if diff := cmp.Diff(want, telemetrytest.Samples(t, reg, "switchboard_admission_calls")); diff != "" {
		t.Errorf("after a change (-want +got):\n%s", diff)
	}
	var off *telemetry.Metrics
	if err := off.AdmissionCalls(func() map[string]int { return states }); err != nil {
		t.Errorf("no metrics: %v", err)
	}
}
