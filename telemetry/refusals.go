package telemetry

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Refusals counts tool calls refused before they ran (admission control, an audit
// log that is not keeping up), by scope and reason; such calls leave no audit row,
// so this is their only trace.
type Refusals struct {
	refused *prometheus.CounterVec
}

// NewRefusals registers the refusal counter on m's registry; with m nil it returns
// nil, whose methods do nothing.
func NewRefusals(m *Metrics) (*Refusals, error) {
	if m == nil {
		return nil, nil
	}
	r := &Refusals{refused: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "tool_calls_refused_total",
		Help: "Tool calls refused before they ran (scope node, tenant or audit) or before they sent anything to their upstream (scope upstream), by scope and reason (queue_full, over_share, over_part, wait_exceeded, slow, draining, audit_behind); the first leave no audit row.",
	}, []string{"scope", "reason"})}
	if err := m.Register(r.refused); err != nil {
		return nil, fmt.Errorf("register refusals: %w", err)
	}
	return r, nil
}

// Refused counts one refused call.
func (r *Refusals) Refused(scope, reason string) {
	if r == nil {
		return
	}
	r.refused.WithLabelValues(scope, reason).Inc()
}
