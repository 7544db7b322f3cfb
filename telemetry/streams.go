package telemetry

import "github.com/prometheus/client_golang/prometheus"

// OpenStreams reports, on every scrape, how many MCP SSE streams (GET streams, calls
// answering with a stream, resumptions) this node has open
// (switchboard_mcp_open_streams). A figure that only grows says streams outlive their
// clients.
func (m *Metrics) OpenStreams(open func() int64) error {
	if m == nil {
		return nil
	}
	return m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "mcp_open_streams",
		Help: "MCP SSE streams this node has open: GET streams, calls answering with a stream, resumptions.",
	}, func() float64 { return float64(open()) }))
}
