package telemetry

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// ThrottleKinds are the refusals of the per-client throttles (package limits): an
// unknown API key from an address that sent too many, a sign-in to a locked account,
// from an address that failed too often, or while too many are checked, and a request
// body over its address's share of the body budget or the budget itself.
var ThrottleKinds = []string{"unknown_key", "sign_in_account", "sign_in_address", "sign_in_busy", "body_address", "body_budget"}

// Throttles counts the refusals of the per-client throttles, by kind
// (switchboard_throttle_refusals_total): a valid caller refused shows here before
// anywhere else.
type Throttles struct {
	refused *prometheus.CounterVec
}

// NewThrottles registers the throttle refusal counter on m's registry, every kind at 0;
// with m nil it returns nil, whose methods do nothing.
func NewThrottles(m *Metrics) (*Throttles, error) {
	if m == nil {
		return nil, nil
	}
	t := &Throttles{refused: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "throttle_refusals_total",
		Help: "Requests refused by a per-client throttle, by kind (unknown_key, sign_in_account, sign_in_address, sign_in_busy, body_address, body_budget).",
	}, []string{"kind"})}
	for _, k := range ThrottleKinds {
		t.refused.WithLabelValues(k)
	}
	if err := m.Register(t.refused); err != nil {
		return nil, fmt.Errorf("register throttle refusals: %w", err)
	}
	return t, nil
}

// Refused counts one refusal of kind.
func (t *Throttles) Refused(kind string) {
	if t == nil {
		return
	}
	t.refused.WithLabelValues(kind).Inc()
}
