package telemetry_test

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// describingRegistry is a registry that remembers the name and labels of every metric
// its collectors describe, whether or not they have samples yet.
type describingRegistry struct {
	*prometheus.Registry
	mu     sync.Mutex
	names  map[string][]string // fully-qualified name -> variable labels
	helps  map[string]string
	fqName *regexp.Regexp
}

func newDescribingRegistry() *describingRegistry {
	return &describingRegistry{
		Registry: prometheus.NewRegistry(), names: map[string][]string{}, helps: map[string]string{},
		fqName: regexp.MustCompile(`fqName: "([^"]+)", help: "([^"]*)",.*?variableLabels: \{([^}]*)\}`),
	}
}

func (r *describingRegistry) Register(c prometheus.Collector) error {
	if err := r.Registry.Register(c); err != nil {
		return err
	}
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for d := range ch {
		m := r.fqName.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		var labels []string
		if m[3] != "" {
			labels = strings.Split(m[3], ",")
		}
		r.names[m[1]], r.helps[m[1]] = labels, m[2]
	}
	return nil
}

// fullMetrics registers every metric serve registers, as serve does.
func fullMetrics(t *testing.T) (*telemetry.Metrics, *describingRegistry) {
	t.Helper()
	reg := newDescribingRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := testdb.SQLite(t).DB()
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{m.DBPool(sqlDB), m.ConnectionsByStatus(sqlDB, nil), m.RunsByState(sqlDB, nil), m.SessionsRecorded(sqlDB, nil), m.AuditQueue(func() int { return 3 }),
		m.AdmissionCalls(func() map[string]int { return map[string]int{"running": 2, "upstream_slow": 1} })} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := telemetry.NewRefusals(m); err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.NewThrottles(m); err != nil {
		t.Fatal(err)
	}
	if _, err := m.HTTPStatuses(http.NotFoundHandler()); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{m.Draining(func() bool { return false }), m.OpenStreams(func() int64 { return 0 })} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return m, reg
}

func TestMetricNamesFollowPrometheusConventions(t *testing.T) {
	t.Parallel()
	_, reg := fullMetrics(t)
	ours := 0
	for name, labels := range reg.names {
		if !strings.HasPrefix(name, "switchboard_") {
			continue
		}
		ours++
		if reg.helps[name] == "" || !strings.HasSuffix(reg.helps[name], ".") {
			t.Errorf("%s: help %q is not a sentence", name, reg.helps[name])
		}
		if strings.Contains(name, "duration") && !strings.HasSuffix(name, "_seconds") {
			t.Errorf("%s: a duration must be in _seconds", name)
		}
		for _, l := range labels {
			if strings.Contains(l, "tenant") || strings.Contains(l, "connection") || strings.Contains(l, "principal") {
				t.Errorf("%s: label %s is unbounded (tenants' objects belong in the audit log)", name, l)
			}
		}
	}
	if ours < 14 {
		t.Errorf("only %d switchboard_ metrics described: %v", ours, reg.names)
	}
	// Counters end in _total and nothing else does.
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "switchboard_") && (f.GetType().String() == "COUNTER") != strings.HasSuffix(f.GetName(), "_total") {
			t.Errorf("%s is a %s: only counters end in _total", f.GetName(), f.GetType())
		}
	}
}

func TestMetricsRecord(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.TokenRefresh("github", "ok")
	m.TokenRefresh("github", "reconnect")
	m.TokenRefresh("github", "ok")
	m.SessionOpened()
	m.SessionOpened()
	m.SessionClosed()
	m.AuditFlush(40, 3*time.Millisecond, nil)
	m.AuditFlush(40, time.Second, errors.New("database is down"))
	m.AuditFlush(2, time.Millisecond, nil)
	m.ObserveUpstream("slack", 0, time.Second) // no answer
	m.ObserveUpstream("slack", 503, time.Second)
	if err := m.AuditQueue(func() int { return 17 }); err != nil {
		t.Fatal(err)
	}
	got := telemetrytest.Samples(t, reg, "switchboard_")
	for k := range got {
		if strings.Contains(k, "_sum") {
			delete(got, k)
		}
	}
	want := map[string]float64{
		`switchboard_token_refreshes_total{outcome="ok",provider="github"}`:        2,
		`switchboard_token_refreshes_total{outcome="reconnect",provider="github"}`: 1,
		`switchboard_mcp_sessions`:                                              1,
		`switchboard_audit_flush_duration_seconds_count{outcome="ok"}`:          2,
		`switchboard_audit_flush_duration_seconds_count{outcome="error"}`:       1,
		`switchboard_audit_events_written_total`:                                42,
		`switchboard_audit_queue_depth`:                                         17,
		`switchboard_upstream_requests_total{code="error",provider="slack"}`:    1,
		`switchboard_upstream_requests_total{code="503",provider="slack"}`:      1,
		`switchboard_upstream_request_duration_seconds_count{provider="slack"}`: 2,
		`switchboard_ratelimit_wait_seconds_count{provider="slack"}`:            0,
		`switchboard_ratelimit_refusals_total{provider="slack"}`:                0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	t.Parallel()
	var m *telemetry.Metrics
	// None of these may panic: components without metrics hold a nil *Metrics.
	m.ObserveToolCall(telemetry.ToolCall{Provider: "github", Tool: "github_get_issue", Outcome: "ok"})
	m.ObserveUpstream("github", 200, time.Millisecond)
	m.TokenRefresh("github", "ok")
	m.SessionOpened()
	m.SessionClosed()
	m.AuditFlush(1, time.Millisecond, nil)
	if err := m.AuditQueue(func() int { return 0 }); err != nil {
		t.Errorf("AuditQueue on nil metrics: %v", err)
	}
	if m := telemetry.New(nil, nil).Metrics(); m != nil {
		t.Errorf("Metrics() = %v, want nil", m)
	}
}

func TestRegisteringTwiceOnOneRegistryFails(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := telemetry.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.NewMetrics(reg); err == nil {
		t.Error("a second NewMetrics on the same registry succeeded; want a registration error")
	}
}
