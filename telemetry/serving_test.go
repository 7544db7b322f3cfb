package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestHTTPStatusesCountsByGroupAndClass serves requests of every route group: each
// answer is counted under its group and status class, an answer that only wrote a
// body as 2xx, and the probes not at all.
func TestHTTPStatusesCountsByGroupAndClass(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.HTTPStatuses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := r.URL.Query().Get("status"); s != "" {
			code, _ := strconv.Atoi(s)
			w.WriteHeader(code)
			return
		}
		_, _ = io.WriteString(w, "ok") // no WriteHeader: 200
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/mcp/acme", "/mcp/acme?status=202", "/mcp/acme?status=429", "/mcp/acme/agents/a1?status=503",
		"/api/tools?status=401", "/api/tools",
		"/oauth/token?status=400", "/.well-known/oauth-authorization-server", "/signin/sso/callback?status=302",
		"/", "/settings?status=404",
		"/healthz", "/readyz?status=503",
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}
	got := telemetrytest.Samples(t, reg, "switchboard_http_responses_total")
	for k, v := range got {
		if v == 0 {
			delete(got, k)
		}
	}
	want := map[string]float64{
		`switchboard_http_responses_total{class="2xx",group="mcp"}`:   2,
		`switchboard_http_responses_total{class="4xx",group="mcp"}`:   1,
		`switchboard_http_responses_total{class="5xx",group="mcp"}`:   1,
		`switchboard_http_responses_total{class="2xx",group="api"}`:   1,
		`switchboard_http_responses_total{class="4xx",group="api"}`:   1,
		`switchboard_http_responses_total{class="2xx",group="oauth"}`: 1,
		`switchboard_http_responses_total{class="3xx",group="oauth"}`: 1,
		`switchboard_http_responses_total{class="4xx",group="oauth"}`: 1,
		`switchboard_http_responses_total{class="2xx",group="ui"}`:    1,
		`switchboard_http_responses_total{class="4xx",group="ui"}`:    1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HTTP answers counted (-want +got):\n%s", diff)
	}
}

func TestDrainingGauge(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var draining atomic.Bool
	if err := m.Draining(draining.Load); err != nil {
		t.Fatal(err)
	}
	var got []float64
	got = append(got, telemetrytest.Samples(t, reg, "switchboard_draining")["switchboard_draining"])
	draining.Store(true)
	got = append(got, telemetrytest.Samples(t, reg, "switchboard_draining")["switchboard_draining"])
	if diff := cmp.Diff([]float64{0, 1}, got); diff != "" {
		t.Errorf("switchboard_draining serving, then draining (-want +got):\n%s", diff)
	}
}

func TestThrottleRefusalsCountedByKind(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	th, err := telemetry.NewThrottles(m)
	if err != nil {
		t.Fatal(err)
	}
	th.Refused("unknown_key")
	th.Refused("unknown_key")
	th.Refused("sign_in_busy")
	want := map[string]float64{
		`switchboard_throttle_refusals_total{kind="unknown_key"}`:     2,
		`switchboard_throttle_refusals_total{kind="sign_in_account"}`: 0,
		`switchboard_throttle_refusals_total{kind="sign_in_address"}`: 0,
		`switchboard_throttle_refusals_total{kind="sign_in_busy"}`:    1,
		`switchboard_throttle_refusals_total{kind="body_address"}`:    0,
		`switchboard_throttle_refusals_total{kind="body_budget"}`:     0,
	}
	if diff := cmp.Diff(want, telemetrytest.Samples(t, reg, "switchboard_throttle")); diff != "" {
		t.Errorf("throttle refusals (-want +got):\n%s", diff)
	}
	var none *telemetry.Throttles
	none.Refused("unknown_key") // without metrics: nothing, no panic
}
