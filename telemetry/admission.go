package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// admissionCalls is the gauge of the node's tool calls in its admission by state,
// read on scrape.
type admissionCalls struct {
	desc   *prometheus.Desc
	states func() map[string]int
}

// AdmissionCalls reports the tool calls in this node's admission by state, from
// states on every scrape (limits.Admission.States).
func (m *Metrics) AdmissionCalls(states func() map[string]int) error {
	if m == nil {
		return nil
	}
	return m.Register(&admissionCalls{states: states, desc: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "admission_calls"),
		"Tool calls in this node's admission, by state: running (holding a place), waiting (new, at the door), resuming (back, waiting for a place), "+
			"audit_commit (waiting for their audit row's commit), upstream (waiting for an upstream's answer), upstream_slow (for over the slow bound, "+
			"out of the bound on calls under way) and upstream_queued (waiting to go to an upstream at its bound).",
		[]string{"state"}, nil)})
}

// Describe implements prometheus.Collector.
func (c *admissionCalls) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *admissionCalls) Collect(ch chan<- prometheus.Metric) {
	for state, n := range c.states() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), state)
	}
}
