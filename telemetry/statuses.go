package telemetry

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// routeGroups are the groups of routes HTTP answers are counted by.
var routeGroups = []string{"mcp", "api", "oauth", "ui"}

// statusClasses are the classes of HTTP statuses.
var statusClasses = []string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// routeGroup is the group of a request's path: the MCP URLs, the REST API, OAuth
// (the authorization server, its metadata, providers' callbacks, single sign-on), and
// everything else (the web UI). The probes are not counted ("").
func routeGroup(path string) string {
	switch {
	case path == "/healthz" || path == "/readyz":
		return ""
	case strings.HasPrefix(path, "/mcp/"):
		return "mcp"
	case strings.HasPrefix(path, "/api/"):
		return "api"
	case strings.HasPrefix(path, "/oauth/"), strings.HasPrefix(path, "/.well-known/"), strings.HasPrefix(path, "/signin/sso"):
		return "oauth"
	}
	return "ui"
}

// HTTPStatuses wraps the public HTTP handler: every answer is counted by route group
// and status class (switchboard_http_responses_total) when its handler returns. With
// m nil it returns next.
func (m *Metrics) HTTPStatuses(next http.Handler) (http.Handler, error) {
	if m == nil {
		return next, nil
	}
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_responses_total",
		Help: "HTTP answers of the public listener, by route group (mcp, api, oauth, ui; probes left out) and status class (2xx, 4xx, …).",
	}, []string{"group", "class"})
	counters := map[string][5]prometheus.Counter{}
	for _, g := range routeGroups {
		var byClass [5]prometheus.Counter
		for i, c := range statusClasses {
			byClass[i] = vec.WithLabelValues(g, c)
		}
		counters[g] = byClass
	}
	if err := m.Register(vec); err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		group := routeGroup(r.URL.Path)
		if group == "" {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			if class := status/100 - 1; class >= 0 && class < len(statusClasses) {
				counters[group][class].Inc()
			}
		}()
		next.ServeHTTP(sw, r)
	}), nil
}

// statusWriter remembers the status an answer started with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flushes).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Draining reports, on every scrape, whether this node is shutting down
// (switchboard_draining: 0 serving, 1 from SIGTERM on, while /readyz answers 503 and
// the calls under way finish).
func (m *Metrics) Draining(draining func() bool) error {
	if m == nil {
		return nil
	}
	return m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "draining",
		Help: "1 while this node is shutting down (from SIGTERM: /readyz answers 503, then the calls under way drain), 0 while it serves.",
	}, func() float64 {
		if draining() {
			return 1
		}
		return 0
	}))
}
