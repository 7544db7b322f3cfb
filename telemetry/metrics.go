package telemetry

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric Switchboard defines.
const Namespace = "switchboard"

// durationBuckets are the latency buckets, in seconds: from a cached answer (1 ms) to a
// slow upstream (a minute).
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics are the hub's Prometheus metrics. Create them with NewMetrics on a registry;
// a nil *Metrics records nothing. Methods are safe for concurrent use and allocate
// nothing once a label combination has been seen.
type Metrics struct {
	toolCalls        *prometheus.CounterVec
	toolDuration     *prometheus.HistogramVec
	toolHub          *prometheus.HistogramVec
	toolUpstream     *prometheus.HistogramVec
	upstreamRequests *prometheus.CounterVec
	upstreamDuration *prometheus.HistogramVec
	rateLimitWaits   *prometheus.HistogramVec
	rateLimitRefused *prometheus.CounterVec
	tokenRefreshes   *prometheus.CounterVec
	mcpSessions      prometheus.Gauge
	auditFlushes     *prometheus.HistogramVec
	auditEvents      prometheus.Counter

	tools     toolTable
	upstreams upstreamTable
	reg       prometheus.Registerer
}

// NewMetrics creates the hub's metrics and registers them, with the Go runtime and
// process collectors, on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		reg: reg,
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "tool_calls_total",
			Help: "Tool calls run through the router, by provider, tool and outcome (ok or the error code).",
		}, []string{"provider", "tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "tool_call_duration_seconds",
			Help:    "Time a tool call took in the router, from start to answer, by provider, tool and outcome.",
			Buckets: durationBuckets,
		}, []string{"provider", "tool", "outcome"}),
		toolHub: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "tool_call_hub_duration_seconds",
			Help:    "Time a tool call spent in the hub itself: its whole time less the upstream requests and the rate-limit waits.",
			Buckets: durationBuckets,
		}, []string{"provider", "tool"}),
		toolUpstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "tool_call_upstream_duration_seconds",
			Help:    "Time a tool call spent waiting for its upstream's answers (every attempt, retries included).",
			Buckets: durationBuckets,
		}, []string{"provider", "tool"}),
		upstreamRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "upstream_requests_total",
			Help: "HTTP requests sent to providers' APIs, every attempt, by provider and status code (error when no answer came).",
		}, []string{"provider", "code"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "upstream_request_duration_seconds",
			Help:    "Time until a provider's API answered one HTTP request (its headers), by provider.",
			Buckets: durationBuckets,
		}, []string{"provider"}),
		rateLimitWaits: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "ratelimit_wait_seconds",
			Help:    "Time tool calls waited for their connection's rate limit, by provider; only calls that waited.",
			Buckets: durationBuckets,
		}, []string{"provider"}),
		rateLimitRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "ratelimit_refusals_total",
			Help: "Tool calls refused because their connection's rate limit would have made them wait too long, by provider.",
		}, []string{"provider"}),
		tokenRefreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "token_refreshes_total",
			Help: "OAuth token refreshes, by provider and outcome (ok, or the error code: reconnect when the provider refused the refresh token).",
		}, []string{"provider", "outcome"}),
		mcpSessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "mcp_sessions",
			Help: "MCP sessions this node holds (registered with its MCP servers).",
		}),
		auditFlushes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "audit_flush_duration_seconds",
			Help:    "Time one batch of audit events took to write, by outcome (ok or error).",
			Buckets: durationBuckets,
		}, []string{"outcome"}),
		auditEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "audit_events_written_total",
			Help: "Audit events written to the database.",
		}),
	}
	for _, c := range []prometheus.Collector{
		m.toolCalls, m.toolDuration, m.toolHub, m.toolUpstream, m.upstreamRequests, m.upstreamDuration,
		m.rateLimitWaits, m.rateLimitRefused, m.tokenRefreshes, m.mcpSessions, m.auditFlushes, m.auditEvents,
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	if err := registerRuntime(reg); err != nil {
		return nil, err
	}
	return m, nil
}

// Register adds a collector (a database pool's, a query run on scrape) to the registry
// the metrics were created on.
func (m *Metrics) Register(c prometheus.Collector) error {
	if m == nil {
		return nil
	}
	if err := m.reg.Register(c); err != nil {
		return fmt.Errorf("register collector: %w", err)
	}
	return nil
}

// TokenRefresh counts one refresh of a connection's OAuth token; outcome is "ok" or
// the error's code.
func (m *Metrics) TokenRefresh(provider, outcome string) {
	if m == nil {
		return
	}
	m.tokenRefreshes.WithLabelValues(provider, outcome).Inc()
}

// SessionOpened and SessionClosed follow the live MCP sessions.
func (m *Metrics) SessionOpened() {
	if m != nil {
		m.mcpSessions.Inc()
	}
}

// SessionClosed counts an MCP session that ended.
func (m *Metrics) SessionClosed() {
	if m != nil {
		m.mcpSessions.Dec()
	}
}

// AuditFlush records one write of a batch of n audit events that took d.
func (m *Metrics) AuditFlush(n int, d time.Duration, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.auditFlushes.WithLabelValues("error").Observe(d.Seconds())
		return
	}
	m.auditFlushes.WithLabelValues("ok").Observe(d.Seconds())
	m.auditEvents.Add(float64(n))
}

// AuditQueue reports the depth of the audit writer's queue on every scrape.
func (m *Metrics) AuditQueue(depth func() int) error {
	if m == nil {
		return nil
	}
	return m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "audit_queue_depth",
		Help: "Audit events waiting to be written.",
	}, func() float64 { return float64(depth()) }))
}

// SharedLimits reports, on every scrape, whether this node reaches the Redis that the
// fleet shares limits through (switchboard_limits_redis_up) and how many rate-limit
// and run-bound decisions it took on its own share of a limit because Redis could not
// be reached (switchboard_limits_fallbacks_total).
func (m *Metrics) SharedLimits(degraded func() bool, fallbacks func() uint64) error {
	if m == nil {
		return nil
	}
	if err := m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "limits_redis_up",
		Help: "1 when the last request to the Redis shared by the fleet's limits succeeded, 0 while this node falls back to its share.",
	}, func() float64 {
		if degraded() {
			return 0
		}
		return 1
	})); err != nil {
		return err
	}
	return m.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace, Name: "limits_fallbacks_total",
		Help: "Rate-limit and run-bound decisions this node took on its own share of a limit because Redis could not be reached.",
	}, func() float64 { return float64(fallbacks()) }))
}
