// Package telemetrytest helps tests read what the hub's telemetry recorded.
//
// Start from [Samples].
package telemetrytest

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Samples gathers g and returns every sample of the families whose names start with
// prefix, keyed `name{label="value",…}` with labels sorted: a counter's or gauge's
// value, and for a histogram its sample count (key suffix _count) and sum (_sum).
func Samples(t testing.TB, g prometheus.Gatherer, prefix string) map[string]float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), prefix) {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := labelString(m.GetLabel())
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[f.GetName()+labels] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[f.GetName()+labels] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[f.GetName()+"_count"+labels] = float64(m.GetHistogram().GetSampleCount())
				out[f.GetName()+"_sum"+labels] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

func labelString(ls []*dto.LabelPair) string {
	if len(ls) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}
