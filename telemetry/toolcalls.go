package telemetry

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Tool labels for calls whose tool name is not one of the registry's: the name then
// comes from a tenant (a remote MCP server's tools) or from the caller (a tool that
// does not exist), and would make the label unbounded.
const (
	ToolDynamic = "dynamic" // a tool a connection brings itself
	ToolUnknown = "unknown" // a tool that does not exist
)

// ToolCall is one finished tool call as the router measured it.
type ToolCall struct {
	Provider string // the tool's provider
	Tool     string // a registry tool's name, ToolDynamic or ToolUnknown
	Outcome  string // "ok" or the error's code
	// Duration is the whole call; Upstream the part spent waiting for the upstream's
	// answers; RateLimitWait the part spent waiting for the connection's rate limit.
	Duration, Upstream, RateLimitWait time.Duration
	// RateLimited says the connection's rate limit refused the call.
	RateLimited bool
}

type toolKey struct{ provider, tool string }

// toolHandles are one tool's bound metrics.
type toolHandles struct {
	hub, upstream prometheus.Observer
	outcomes      cowMap[string, outcomeHandles]
}

type outcomeHandles struct {
	calls    prometheus.Counter
	duration prometheus.Observer
}

// providerHandles are one provider's bound metrics.
type providerHandles struct {
	wait     prometheus.Observer
	refused  prometheus.Counter
	duration prometheus.Observer
	codes    cowMap[int, prometheus.Counter]
}

// ObserveToolCall records a finished tool call.
func (m *Metrics) ObserveToolCall(c ToolCall) {
	if m == nil {
		return
	}
	th := m.tools.get(toolKey{c.Provider, c.Tool}, func() *toolHandles {
		return &toolHandles{
			hub:      m.toolHub.WithLabelValues(c.Provider, c.Tool),
			upstream: m.toolUpstream.WithLabelValues(c.Provider, c.Tool),
		}
	})
	oh := th.outcomes.get(c.Outcome, func() outcomeHandles {
		return outcomeHandles{
			calls:    m.toolCalls.WithLabelValues(c.Provider, c.Tool, c.Outcome),
			duration: m.toolDuration.WithLabelValues(c.Provider, c.Tool, c.Outcome),
		}
	})
	oh.calls.Inc()
	oh.duration.Observe(c.Duration.Seconds())
	th.upstream.Observe(c.Upstream.Seconds())
	th.hub.Observe(max(c.Duration-c.Upstream-c.RateLimitWait, 0).Seconds())
	if c.RateLimitWait > 0 || c.RateLimited {
		ph := m.provider(c.Provider)
		if c.RateLimitWait > 0 {
			ph.wait.Observe(c.RateLimitWait.Seconds())
		}
		if c.RateLimited {
			ph.refused.Inc()
		}
	}
}

// ObserveUpstream records one HTTP request to a provider's API: its status (0 when
// no answer came) and the time until its answer's headers.
func (m *Metrics) ObserveUpstream(provider string, status int, d time.Duration) {
	if m == nil {
		return
	}
	ph := m.provider(provider)
	ph.duration.Observe(d.Seconds())
	ph.codes.get(status, func() prometheus.Counter {
		code := "error"
		if status > 0 {
			code = strconv.Itoa(status)
		}
		return m.upstreamRequests.WithLabelValues(provider, code)
	}).Inc()
}

func (m *Metrics) provider(name string) *providerHandles {
	return m.upstreams.get(name, func() *providerHandles {
		return &providerHandles{
			wait:     m.rateLimitWaits.WithLabelValues(name),
			refused:  m.rateLimitRefused.WithLabelValues(name),
			duration: m.upstreamDuration.WithLabelValues(name),
		}
	})
}

// toolTable and upstreamTable hold the bound handles.
type (
	toolTable     = cowMap[toolKey, *toolHandles]
	upstreamTable = cowMap[string, *providerHandles]
)
