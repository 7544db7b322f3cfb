package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// withMetrics rebuilds the fixture's router with metrics on a registry of the test's own.
func withMetrics(t *testing.T, f *fixture) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	tel := telemetry.New(m, nil)
	f.router = New(Options{Registry: f.router.registry, Connections: f.conns, Audit: f.audit,
		Transports: &providers.Transports{Wrap: tel.UpstreamTransport}, Telemetry: tel})
	return reg
}

func TestExecuteMetrics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reg := withMetrics(t, f)
	calls := []struct {
		who  switchboard.Principal
		req  Request
		want switchboard.Code
	}{
		{alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}, ""},
		{alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"slow"}`)}, switchboard.CodeRateLimited},
		// Inside the upstream's Retry-After window: the limiter refuses it, nothing is sent.
		{alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}, switchboard.CodeRateLimited},
		{alice, Request{Tool: "fake_greet", ConnectionID: "con_a2", Args: json.RawMessage(`{"name":"gone"}`)}, switchboard.CodeReconnect},
		{bob, Request{Tool: "fake_greet", ConnectionID: "con_b1", Args: json.RawMessage(`{"name":"bo"}`)}, ""},
		{bob, Request{Tool: "bob's own invention", ConnectionID: "con_b1"}, switchboard.CodeNotFound},
	}
	for i, c := range calls {
		_, err := f.router.Execute(context.Background(), c.who, c.req)
		if got := switchboard.CodeOf(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Fatalf("call %d: error %v, want code %q", i, err, c.want)
		}
	}
	got := telemetrytest.Samples(t, reg, "switchboard_")
	counts := map[string]float64{}
	for k, v := range got {
		if strings.Contains(k, "_sum{") || strings.HasPrefix(k, "switchboard_mcp_sessions") {
			continue // times vary; sessions are the adapter's
		}
		counts[k] = v
	}
	want := map[string]float64{
		`switchboard_tool_calls_total{outcome="ok",provider="fake",tool="fake_greet"}`:                           2,
		`switchboard_tool_calls_total{outcome="rate_limited",provider="fake",tool="fake_greet"}`:                 2,
		`switchboard_tool_calls_total{outcome="reconnect",provider="fake",tool="fake_greet"}`:                    1,
		`switchboard_tool_calls_total{outcome="not_found",provider="unknown",tool="unknown"}`:                    1,
		`switchboard_tool_call_duration_seconds_count{outcome="ok",provider="fake",tool="fake_greet"}`:           2,
		`switchboard_tool_call_duration_seconds_count{outcome="rate_limited",provider="fake",tool="fake_greet"}`: 2,
		`switchboard_tool_call_duration_seconds_count{outcome="reconnect",provider="fake",tool="fake_greet"}`:    1,
		`switchboard_tool_call_duration_seconds_count{outcome="not_found",provider="unknown",tool="unknown"}`:    1,
		`switchboard_tool_call_hub_duration_seconds_count{provider="fake",tool="fake_greet"}`:                    5,
		`switchboard_tool_call_hub_duration_seconds_count{provider="unknown",tool="unknown"}`:                    1,
		`switchboard_tool_call_upstream_duration_seconds_count{provider="fake",tool="fake_greet"}`:               5,
		`switchboard_tool_call_upstream_duration_seconds_count{provider="unknown",tool="unknown"}`:               1,
		// Every request that reached the upstream, by status; the refused call is not one.
		`switchboard_upstream_requests_total{code="200",provider="fake"}`:      2,
		`switchboard_upstream_requests_total{code="429",provider="fake"}`:      1,
		`switchboard_upstream_requests_total{code="401",provider="fake"}`:      1,
		`switchboard_upstream_request_duration_seconds_count{provider="fake"}`: 4,
		`switchboard_ratelimit_wait_seconds_count{provider="fake"}`:            0, // nothing waited: the window was too long
		`switchboard_ratelimit_refusals_total{provider="fake"}`:                1,
		`switchboard_audit_events_written_total`:                               0,
	}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	for k := range got {
		if strings.Contains(k, `"ten_`) || strings.Contains(k, "tenant") {
			t.Errorf("a metric carries a tenant: %s", k)
		}
	}
}

func TestExecuteRecordsUpstreamTimeApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reg := withMetrics(t, f)
	if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}); err != nil {
		t.Fatal(err)
	}
	got := telemetrytest.Samples(t, reg, "switchboard_tool_call")
	labels := `{provider="fake",tool="fake_greet"}`
	total := got[`switchboard_tool_call_duration_seconds_sum{outcome="ok",provider="fake",tool="fake_greet"}`]
	upstream := got["switchboard_tool_call_upstream_duration_seconds_sum"+labels]
	hub := got["switchboard_tool_call_hub_duration_seconds_sum"+labels]
	// The upstream answered over a real socket, so it took some time, and the two parts
	// add up to the whole (no rate-limit wait here).
	if upstream <= 0 || hub < 0 || upstream > total {
		t.Errorf("upstream %g s, hub %g s, total %g s: want 0 < upstream <= total", upstream, hub, total)
	}
	if diff := total - upstream - hub; diff > 1e-6 || diff < -1e-6 {
		t.Errorf("hub %g + upstream %g != total %g", hub, upstream, total)
	}
}

func TestExecuteMetricsRateLimitWait(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	spec := fakeProvider("paced")
	// One call every 2 s: the second call waits for the bucket unless 2 s pass between
	// the two (at 50/s, a loaded machine's pause of 20 ms refilled it).
	spec.RateLimit = providers.RateLimit{PerSecond: 0.5, Burst: 1}
	if err := f.router.registry.Register(spec); err != nil {
		t.Fatal(err)
	}
	_ = f.router.registry.SetBaseURL("paced", f.upstream.URL)
	f.conns.add(connections.Connection{ID: "con_p1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "paced", AccountLabel: "paced", Status: connections.StatusActive}, "token-p1")
	reg := withMetrics(t, f)
	for range 2 { // the second call waits for the bucket (up to 2 s)
		if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "paced_greet", ConnectionID: "con_p1", Args: json.RawMessage(`{"name":"ada"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	got := telemetrytest.Samples(t, reg, "switchboard_ratelimit")
	if n := got[`switchboard_ratelimit_wait_seconds_count{provider="paced"}`]; n != 1 {
		t.Errorf("rate-limit waits = %g, want 1 (samples %v)", n, got)
	}
	if s := got[`switchboard_ratelimit_wait_seconds_sum{provider="paced"}`]; s <= 0 {
		t.Errorf("rate-limit wait time = %g s, want more than 0", s)
	}
}

// downConns is a connection store whose database does not answer.
type downConns struct{ *memConns }

func (downConns) Open(context.Context, switchboard.TenantID, string) (connections.Connection, connections.Credentials, error) {
	return connections.Connection{}, connections.Credentials{}, errors.New("dial tcp 10.0.0.5:5432: connection refused")
}

// TestInternalErrorLogCarriesTheTraceID: the line the router logs for a failed call
// carries the trace id of the call's context, here the one an agent sent in _meta.
func TestInternalErrorLogCarriesTheTraceID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var out bytes.Buffer
	log := slog.New(telemetry.TraceHandler{Next: slog.NewJSONHandler(&out, nil)})
	r := New(Options{Registry: f.router.registry, Connections: downConns{f.conns}, Audit: f.audit, Logger: log})
	ctx := telemetry.ContextFromMeta(context.Background(), map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	_, err := r.Execute(ctx, alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeUnavailable { // a database outage (see TestDatabaseOutageIsUnavailable)
		t.Fatalf("error %v, want unavailable", err)
	}
	var line struct {
		Msg     string `json:"msg"`
		TraceID string `json:"trace_id"`
	}
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", out.String(), err)
	}
	if line.Msg != "open connection con_a1" || line.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("logged %s; want the failure with trace_id 4bf92f3577b34da6a3ce929d0e0e4736", out.String())
	}
}

// ownEcho supplies one tool of its own to every connection of its provider; the tool
// takes the connection's rate limit itself, as a remote MCP server's does.
func ownEcho(spec *providers.Spec) func(context.Context, providers.Connection) ([]*providers.Tool, error) {
	return func(context.Context, providers.Connection) ([]*providers.Tool, error) {
		op := &providers.Operation[struct{}, struct{}]{Name: "echo", Title: "Echo", Description: "Answer at once.",
			Run: func(ctx context.Context, c *providers.Call, _ struct{}) (struct{}, error) {
				return struct{}{}, c.Wait(ctx)
			}}
		t, err := providers.NewConnectionTool(spec, "tenants_own_echo", op, nil, nil)
		if err != nil {
			return nil, err
		}
		return []*providers.Tool{t}, nil
	}
}

// TestDynamicToolMetrics: a tool a connection brings itself is labelled as the
// dynamic group (its name is the tenant's), and its rate-limit waits are counted.
func TestDynamicToolMetrics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// One call every 2 s, as in TestExecuteMetricsRateLimitWait: at 50/s a pause of
	// 20 ms between the calls refilled the bucket and nothing waited.
	spec := &providers.Spec{Name: "mcp", Title: "Remote MCP", RateLimit: providers.RateLimit{PerSecond: 0.5, Burst: 1}}
	spec.Tools = ownEcho(spec)
	if err := f.router.registry.Register(*spec); err != nil {
		t.Fatal(err)
	}
	f.conns.add(connections.Connection{ID: "con_m1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "mcp", AccountLabel: "docs", Status: connections.StatusActive}, "")
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Registry: f.router.registry, Connections: f.conns, Audit: f.audit, Telemetry: telemetry.New(m, nil)})
	for range 2 { // the second waits for the bucket (up to 2 s)
		if _, err := r.Execute(context.Background(), alice, Request{Tool: "tenants_own_echo", ConnectionID: "con_m1", Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	got := telemetrytest.Samples(t, reg, "switchboard_")
	for k, want := range map[string]float64{
		`switchboard_tool_calls_total{outcome="ok",provider="mcp",tool="dynamic"}`: 2,
		`switchboard_ratelimit_wait_seconds_count{provider="mcp"}`:                 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %g, want %g", k, got[k], want)
		}
	}
	for k := range got {
		if strings.Contains(k, "tenants_own_echo") {
			t.Errorf("a metric is labelled with the tenant's tool name: %s", k)
		}
	}
}

// TestOutageLogsOnce: a thousand calls failing the same way while the database is down
// write one line, not a thousand (the issue saw 12,000 lines for a 20 s outage).
func TestOutageLogsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var out testlog.Buffer
	h, err := telemetry.NewLogHandler(&out, telemetry.LogJSON, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Registry: f.router.registry, Connections: downConns{f.conns}, Audit: f.audit, Logger: slog.New(h)})
	for range 1000 {
		if _, err := r.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}); switchboard.CodeOf(err) != switchboard.CodeUnavailable {
			t.Fatalf("error %v, want unavailable", err)
		}
	}
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("1000 failed calls wrote %d lines, want 1:\n%s", n, out.String())
	}
}
