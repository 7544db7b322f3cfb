package telemetry

import (
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// AdminHandler serves the admin listener: /metrics (Prometheus, from g) and the pprof
// profiles under /debug/pprof/. It is meant for a listener of its own, reachable by
// operators only, never the public one. It answers only requests whose Host is an IP
// address, localhost or one of hosts (names checked by CheckAdminHost), so a web page
// cannot reach it through a name of its own that resolves to the listener (DNS
// rebinding); any other Host gets 421.
func AdminHandler(g prometheus.Gatherer, hosts []string) http.Handler {
	allowed := adminHosts{}
	for _, h := range hosts {
		allowed[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Switchboard admin: /metrics (Prometheus), /debug/pprof/ (profiles)\n"))
	})
	return allowed.checkHost(mux)
}
