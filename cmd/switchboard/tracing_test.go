package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/switchboard-hub/switchboard/telemetry"
)

// collector is a fake OTLP/HTTP trace collector that keeps the span names it
// receives, and every string a span carries (name, attributes, events, status).
type collector struct {
	mu      sync.Mutex
	names   []string
	strings []string
}

// keep notes the strings of a span: its name and status, and its attributes' and its
// events' as key=value.
func (c *collector) keep(s *tracepb.Span) {
	c.strings = append(c.strings, s.GetName(), s.GetStatus().GetMessage())
	attrs := s.GetAttributes()
	for _, e := range s.GetEvents() {
		c.strings = append(c.strings, e.GetName())
		attrs = append(attrs, e.GetAttributes()...)
	}
	for _, a := range attrs {
		c.strings = append(c.strings, a.GetKey()+"="+a.GetValue().GetStringValue())
	}
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.names = append(c.names, s.GetName())
				c.keep(s)
			}
		}
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// TestServeExportsTraces starts serve with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
// fake collector: the spans of a REST request and of its database statements reach it
// by the time serve has stopped.
func TestServeExportsTraces(t *testing.T) {
	t.Parallel()
	col := &collector{}
	otlp := httptest.NewServer(col)
	t.Cleanup(otlp.Close)
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error",
		"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL})
	lines, stop := startServe(t, e, 5)
	base := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(lines[0])
	var key string
	for _, l := range lines {
		if k, ok := strings.CutPrefix(l, "Admin API key (shown once, store it now): "); ok {
			key = k
		}
	}
	if base == nil || key == "" {
		t.Fatalf("serve printed %q", lines)
	}
	req, _ := http.NewRequest(http.MethodGet, base[1]+"/api/tenant", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/tenant: %d", res.StatusCode)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d", code)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	got := strings.Join(col.names, "\n")
	for _, want := range []string{"GET /api/tenant", "SELECT tenants", "INSERT api_keys"} {
		if !strings.Contains(got, want) {
			t.Errorf("the collector received no span %q; it got:\n%s", want, got)
		}
	}
}

// TestServeExportsNoSecrets starts serve with traces going to a fake collector and
// requests pages and API routes with one-time links, keys and sessions in their paths
// and queries: no string of any span the collector receives carries one (the shapes
// the logs hide), and the invitation page's span names its route.
func TestServeExportsNoSecrets(t *testing.T) {
	t.Parallel()
	col := &collector{}
	otlp := httptest.NewServer(col)
	t.Cleanup(otlp.Close)
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error",
		"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL})
	lines, stop := startServe(t, e, 5)
	base := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(lines[0])
	if base == nil {
		t.Fatalf("serve printed %q", lines)
	}
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/invite/sbi_Invite0123456789abcdefghijklmn"},
		{http.MethodPost, "/invite/sbi_Reset0123456789abcdefghijklmno"},
		{http.MethodGet, "/api/connections/callback?code=sbc_Code0123456789&state=sbs_State0123456789"},
		{http.MethodGet, "/api/keys/sbk_abcdefghijkl_Secret0123456789"},
		{http.MethodGet, "/nowhere/sbs_Session0123456789abcdef?next=sbi_Next0123456789"},
	} {
		req, _ := http.NewRequest(r.method, base[1]+r.path, strings.NewReader("password=correct-horse-battery"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d", code)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, s := range col.strings {
		if telemetry.HasSecret(s) {
			t.Errorf("an exported span carries %q", s)
		}
	}
	if !slices.Contains(col.names, "GET /invite/{token}") || !slices.Contains(col.strings, "url.path=/invite/{token}") {
		t.Errorf("no span GET /invite/{token} with url.path /invite/{token}; spans: %q", col.names)
	}
}
