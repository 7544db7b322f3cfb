package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	hubtools "github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/sessions"
	"github.com/switchboard-hub/switchboard/tenants"
)

// issueJSON is what GitHub answers for GET /repos/{owner}/{repo}/issues/{number}, trimmed.
const issueJSON = `{"id":1,"node_id":"MDU6SXNzdWUx","url":"https://api.github.com/repos/octocat/Hello-World/issues/1347","html_url":"https://github.com/octocat/Hello-World/issues/1347","number":1347,"state":"open","title":"Found a bug","body":"I'm having a problem with this.","user":{"login":"octocat","id":1},"labels":[{"id":208045946,"name":"bug","color":"f29513","description":"Something isn't working","default":true}],"assignees":[],"comments":0,"locked":false,"created_at":"2011-04-22T13:33:48Z","updated_at":"2011-04-22T13:33:48Z","closed_at":null,"author_association":"OWNER"}`

// hub is the whole stack in one process, serving MCP over real loopback HTTP.
type hub struct {
	mcpURL   string
	key      string
	upstream *httptest.Server
	audit    *audit.Writer
	client   *http.Client
	// base is the server's URL; tenants and connect make a second tenant.
	base    string
	tenants *tenants.Store
	conns   *connections.Service
	cstore  *connections.Store
	admit   *limits.Admission
	handler http.Handler
}

func newHub(b *testing.B, extra ...providers.Spec) *hub {
	b.Helper()
	return buildHub(b, true, extra...)
}

// buildHub is newHub with or without the GitHub connection (without it, the tenant's
// tools are the extra providers' alone).
func buildHub(b *testing.B, withGitHub bool, extra ...providers.Spec) *hub {
	b.Helper()
	upstream := fakeGitHub()
	b.Cleanup(upstream.Close)
	h := buildHubAt(b, upstream.URL, withGitHub, nil, extra...)
	h.upstream = upstream
	return h
}

// fakeGitHub is the fake upstream: it answers GitHub's token check and, for anything
// else, the issue, at once.
func fakeGitHub() *httptest.Server {
	return httptest.NewServer(fakeGitHubHandler())
}

// fakeGitHubHandler is fakeGitHub's handler.
func fakeGitHubHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/user":
			// The account is the token's: ghp_<login>, or octocat for any other.
			login := "octocat"
			if _, tok, ok := strings.Cut(r.Header.Get("Authorization"), "ghp_"); ok && strings.HasPrefix(tok, "mem-") {
				login = tok
			}
			w.Header().Set("X-OAuth-Scopes", "repo")
			_, _ = io.WriteString(w, `{"login":"`+login+`","id":1}`)
		default:
			_, _ = io.WriteString(w, issueJSON)
		}
	})
}

// buildHubAt is the hub serving over loopback HTTP with GitHub's API at upstreamURL;
// wrap, when set, wraps the handler the server serves (the hub's process times it).
func buildHubAt(b *testing.B, upstreamURL string, withGitHub bool, wrap func(http.Handler) http.Handler, extra ...providers.Spec) *hub {
	b.Helper()
	ctx := context.Background()
	gin.SetMode(gin.ReleaseMode) // as `switchboard serve` runs
	db := testdb.SQLite(b)
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		b.Fatal(err)
	}
	for _, s := range extra {
		if err := reg.Register(s); err != nil {
			b.Fatal(err)
		}
	}
	_ = reg.SetBaseURL("github", upstreamURL)
	// The per-connection bucket is GitHub's real budget; lift it so the benchmark
	// measures the hub, not the limiter.
	_ = reg.SetRateLimit("github", providers.RateLimit{})
	kr, err := keyring.LoadOrCreateKeyFile(b.TempDir() + "/master.key")
	if err != nil {
		b.Fatal(err)
	}
	tstore := tenants.NewStore(db)
	tenant, key, _, err := tstore.Bootstrap(ctx)
	if err != nil {
		b.Fatal(err)
	}
	writer := audit.NewWriter(db, audit.WriterOptions{})
	b.Cleanup(func() { _ = writer.Close(context.Background()) })
	transports := &providers.Transports{}
	cstore := connections.NewStore(db, kr)
	svc := connections.NewService(cstore, reg, transports, writer)
	p, err := tstore.Authenticate(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	if withGitHub {
		if _, err := svc.Connect(ctx, p, connections.ConnectInput{Provider: "github", Token: "ghp_benchmarktoken"}); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range extra {
		c := &connections.Connection{OwnerUserID: p.UserID, Provider: s.Name, AuthKind: providers.AuthAPIKey, AccountID: "1", AccountLabel: "bulk", Status: connections.StatusActive}
		if err := cstore.Create(ctx, tenant.ID, c, connections.Credentials{AccessToken: "t"}); err != nil {
			b.Fatal(err)
		}
	}
	// The same serving path as `switchboard serve`: the gin engine with its access log
	// (written to nowhere here), and the adapter mounted at /mcp/:tenant.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// As serve wires it: agents (tool modes, confirm policies) and the runs extension,
	// whose confirmation wrapper asks for the confirm policy on every call.
	agentService := agents.NewService(agents.NewStore(db), reg, svc)
	// Admission control as serve wires it, with its defaults.
	// (SWITCHBOARD_MAX_INFLIGHT and SWITCHBOARD_TENANT_MAX_ADMITTED, as serve reads them,
	// and SWITCHBOARD_BENCH_MAX_ADMITTED set the bounds for comparisons.)
	maxInFlight, _ := strconv.Atoi(os.Getenv("SWITCHBOARD_MAX_INFLIGHT"))
	maxAdmitted, _ := strconv.Atoi(os.Getenv("SWITCHBOARD_BENCH_MAX_ADMITTED"))
	tenantAdmitted, _ := strconv.Atoi(os.Getenv("SWITCHBOARD_TENANT_MAX_ADMITTED"))
	admission := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: maxInFlight, MaxAdmitted: maxAdmitted, TenantAdmitted: tenantAdmitted})
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Audit: writer, Transports: transports, ArgsKey: kr.Derive("audit-args"), Policies: agentService,
		Admission: admission})
	runExec := runs.NewExecutor(runs.Options{Store: runs.NewStore(db, kr), Runner: rtr, Registry: reg, Logger: log})
	if err := reg.Register((&hubtools.Tools{Runs: runExec, Registry: reg, Connections: rtr}).Spec()); err != nil { // as serve registers it
		b.Fatal(err)
	}
	if err := reg.Register(hubtools.SearchSpec(rtr)); err != nil { // tool search, as serve registers it
		b.Fatal(err)
	}
	b.Cleanup(func() { runExec.Close(context.Background()) })
	// Every closed-loop caller holds a session of the one key, and the memory benchmarks
	// keep 10,000 initialized ones open for as long as they take to measure.
	adapter := mcpadapter.New(mcpadapter.Options{Router: rtr, Auth: tstore, Agents: agentService, Logger: log, SessionLimits: sessions.Limits{PerPrincipal: 16384, Unused: time.Hour}, Admission: admission,
		Extensions: []mcpadapter.Extension{mcpadapter.RunsExtension(mcpadapter.RunsOptions{Runs: runExec, StateKey: kr.Derive("request-state")})}})
	b.Cleanup(func() { adapter.Close(context.Background()) })
	engine := api.New(api.Options{Registry: reg, Tenants: tstore, Connections: svc, Audit: audit.NewStore(db), Recorder: writer, Logger: log})
	engine.Any(mcpadapter.Prefix+":tenant", gin.WrapH(adapter))
	var served http.Handler = engine
	if wrap != nil {
		served = wrap(engine)
	}
	srv := httptest.NewServer(served)
	b.Cleanup(srv.Close)
	return &hub{
		mcpURL: srv.URL + "/mcp/" + tenant.Slug, key: key, audit: writer,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048}},
		base:   srv.URL, handler: engine, tenants: tstore, conns: svc, cstore: cstore, admit: admission,
	}
}

// session is one MCP client session over raw HTTP, the lightest client there is, so
// the figures are the hub's and not a client library's.
type session struct {
	h  *hub
	id string
	// call is the tools/call params callOrRefusal sends ("" for github_get_issue on the
	// caller's only connection).
	call string
	n    atomic.Int64
	// answer is list's buffer, kept from one list to the next as a client that lists
	// often would keep it, so the client's own allocations do not weigh on the figures.
	answer bytes.Buffer
}

func (h *hub) session(b *testing.B) *session {
	b.Helper()
	s, err := h.newSession()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// newSession is session for goroutines other than the benchmark's, which may not call
// b.Fatal.
func (h *hub) newSession() (*session, error) {
	s := &session{h: h}
	resp, err := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s.id == "" {
		return nil, fmt.Errorf("initialize: HTTP %d without Mcp-Session-Id", resp.StatusCode)
	}
	resp, err = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return s, nil
}

func (s *session) post(body string) (*http.Response, error) {
	return s.h.client.Do(s.request(body))
}

// request is the session's POST of body, as post sends it.
func (s *session) request(body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, s.h.mcpURL, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.h.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// rpc sends one request and returns the JSON-RPC response, whether it came as JSON or
// as one SSE event.
func (s *session) rpc(method, params string) (json.RawMessage, error) {
	id := s.n.Add(1)
	resp, err := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			return nil, &httpRefusal{status: resp.StatusCode, retryAfter: ra, body: body}
		}
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, body)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				body = []byte(data)
			}
		}
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", method, err, body)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, msg.Error.Message)
	}
	return msg.Result, nil
}

// httpRefusal is a request the hub refused at its door (429 or 503) with Retry-After.
type httpRefusal struct {
	status     int
	retryAfter string
	body       []byte
}

func (e *httpRefusal) Error() string {
	return fmt.Sprintf("HTTP %d, Retry-After %s: %s", e.status, e.retryAfter, e.body)
}

// list asks for the tools and checks the answer is a JSON list, without decoding it:
// a client's decoding of a 400 KiB list would otherwise be most of what is timed.
func (s *session) list(params string) error {
	resp, err := s.post(listBody(params))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	s.answer.Reset()
	if _, err := s.answer.ReadFrom(resp.Body); err != nil {
		return err
	}
	body := s.answer.Bytes()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" ||
		!bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)) {
		return fmt.Errorf("tools/list: HTTP %d %s: %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return nil
}

func (s *session) callTool() error {
	res, err := s.rpc("tools/call", `{"name":"github_get_issue","arguments":{"owner":"octocat","repo":"Hello-World","issue_number":1347}}`)
	if err != nil {
		return err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) || !bytes.Contains(res, []byte(`"structuredContent"`)) {
		return fmt.Errorf("tool call failed: %s", res)
	}
	return nil
}

func (h *hub) direct() error {
	req, _ := http.NewRequest(http.MethodGet, h.upstream.URL+"/repos/octocat/Hello-World/issues/1347", nil)
	req.Header.Set("Authorization", "Bearer ghp_benchmarktoken")
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var v map[string]any
	return json.NewDecoder(resp.Body).Decode(&v)
}

// run makes n calls spread over c concurrent callers and returns each call's latency
// and the wall time.
func run(b *testing.B, n, c int, call func(worker int) error) ([]time.Duration, time.Duration) {
	b.Helper()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := call(w); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return lat, time.Since(start)
}

// processCPU is the CPU time (user and system) the whole process has used so far: the
// client, the hub and the fake upstream, which share the process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mallocs is how many heap objects the process has allocated so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// BenchmarkToolsCall runs github_get_issue through the hub and the same request
// straight to the fake upstream, in one run, at 1, 16 and 64 concurrent callers; every
// hub call writes its audit row to SQLite through the batched writer.
func BenchmarkToolsCall(b *testing.B) {
	h := newHub(b)
	for _, c := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("callers=%d", c), func(b *testing.B) {
			sessions := make([]*session, c)
			for i := range sessions {
				sessions[i] = h.session(b)
			}
			// Warm both paths: connections, the scope's server, the pooled client.
			run(b, 4*c, c, func(w int) error { return sessions[w].callTool() })
			run(b, 4*c, c, func(int) error { return h.direct() })
			n := max(b.N, 200)
			b.ResetTimer()
			cpu0, mallocs0 := processCPU(b), mallocs()
			direct, _ := run(b, n, c, func(int) error { return h.direct() })
			cpu1, mallocs1 := processCPU(b), mallocs()
			hubLat, wall := run(b, n, c, func(w int) error { return sessions[w].callTool() })
			// The audit rows are part of a call's cost: the CPU is read once they are written.
			if err := h.audit.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			cpu2, mallocs2 := processCPU(b), mallocs()
			b.StopTimer()
			directCPU, hubCPU := (cpu1-cpu0)/time.Duration(n), (cpu2-cpu1)/time.Duration(n)
			b.ReportMetric(micros(directCPU), "direct-cpu-µs/call")
			b.ReportMetric(micros(hubCPU), "hub-cpu-µs/call")
			b.ReportMetric(micros(hubCPU-directCPU), "added-cpu-µs/call")
			// Allocations do not drift with the machine's load as CPU time does: the
			// steadiest measure of the hub's own work between two builds.
			b.ReportMetric(float64(mallocs2-mallocs1-(mallocs1-mallocs0))/float64(n), "added-allocs/call")
			b.ReportMetric(micros(pct(direct, 0.50)), "direct-p50-µs")
			b.ReportMetric(micros(pct(hubLat, 0.50)), "hub-p50-µs")
			b.ReportMetric(micros(pct(hubLat, 0.50)-pct(direct, 0.50)), "added-p50-µs")
			b.ReportMetric(micros(pct(hubLat, 0.99)-pct(direct, 0.99)), "added-p99-µs")
			b.ReportMetric(float64(n)/wall.Seconds(), "hub-calls/s")
		})
	}
}

type bulkIn struct {
	Owner string  `json:"owner" jsonschema:"Account that owns the repository"`
	Repo  string  `json:"repo" jsonschema:"Repository name"`
	State *string `json:"state,omitempty" jsonschema:"Filter by state" schema:"enum=open|closed|all,default=open"`
	providers.PageInput
}

type bulkOut struct {
	Items      []string `json:"items" jsonschema:"What was found"`
	NextCursor string   `json:"next_cursor,omitempty" jsonschema:"Cursor of the next page"`
}

// bulkSpec is a provider with n operations, to give a tenant a large catalog.
func bulkSpec(n int) providers.Spec {
	ops := make([]providers.Op, n)
	for i := range ops {
		ops[i] = &providers.Operation[bulkIn, bulkOut]{
			Name: fmt.Sprintf("operation_%03d", i), Title: fmt.Sprintf("Operation %d", i),
			Description: "A synthetic operation with a realistic schema, for catalog-size benchmarks.",
			Hints:       providers.Hints{ReadOnly: true},
			Run: func(context.Context, *providers.Call, bulkIn) (bulkOut, error) {
				return bulkOut{Items: []string{}}, nil
			},
		}
	}
	return providers.Spec{Name: "bulk", Title: "Bulk", Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil }, Operations: ops}
}

// BenchmarkToolsList lists the tools of a tenant with 10, 20, 300 and 3,000 tools from
// one session: 300 and 3,000 are GitHub's and a synthetic provider's, 10 and 20 (the
// list of a typical agent) the synthetic provider's alone. Each list is asked for four
// ways, interleaved in rounds of ten:
//   - cached: plainly over loopback HTTP, which the adapter answers from its encoded cache;
//   - mcpgo: with a _meta in the params, which the cache leaves to mcp-go (the answer
//     before the cache);
//   - floor: the same request from the same client to a bare net/http server on
//     loopback that answers the same bytes at once, so what the transport and the client
//     cost is apart from what the hub costs;
//   - handler: the hub's whole handler (gin, access log, key, session, cache) called in
//     this process with a ResponseWriter that keeps nothing, so no transport at all.
//
// Reported per way: p50 and p99 latency.
func BenchmarkToolsList(b *testing.B) {
	github := len(mustRegistry(b).Tools("github"))
	for _, n := range []int{10, 20, 300, 3000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			var h *hub
			if n < github {
				h = buildHub(b, false, bulkSpec(n))
			} else {
				h = newHub(b, bulkSpec(n-github))
			}
			s := h.session(b)
			resp, err := s.post(listBody(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			answer, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			var list struct {
				Result struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal(answer, &list); err != nil {
				b.Fatal(err)
			}
			hubTools := 0
			for _, t := range list.Result.Tools {
				if !strings.HasPrefix(t.Name, "switchboard_") { // the runs extension's management tools
					hubTools++
				}
			}
			if hubTools != n {
				b.Fatalf("tools/list returned %d hub tools, want %d", hubTools, n)
			}
			bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(answer)
			}))
			defer bare.Close()
			floorHub := *h
			floorHub.mcpURL = bare.URL
			floor := &session{h: &floorHub, id: s.id}
			inProcess := func() error {
				req := s.request(listBody(`{}`))
				w := &nullWriter{header: http.Header{}}
				h.handler.ServeHTTP(w, req)
				if w.status != http.StatusOK || w.n != len(answer) {
					return fmt.Errorf("tools/list in process: HTTP %d, %d bytes (want %d)", w.status, w.n, len(answer))
				}
				return nil
			}
			rounds := max(b.N, 50)
			var cached, mcpgo, bareLat, handler []time.Duration
			b.ResetTimer()
			for r := 0; r < rounds; r += 10 {
				for _, way := range []struct {
					call func() error
					into *[]time.Duration
				}{
					{func() error { return s.list(`{}`) }, &cached},
					{func() error { return s.list(`{"_meta":{"bench":1}}`) }, &mcpgo},
					{func() error { return floor.list(`{}`) }, &bareLat},
					{inProcess, &handler},
				} {
					lat, _ := run(b, 10, 1, func(int) error { return way.call() })
					*way.into = append(*way.into, lat...)
				}
			}
			b.StopTimer()
			b.ReportMetric(micros(pct(cached, 0.50)), "cached-p50-µs")
			b.ReportMetric(micros(pct(cached, 0.99)), "cached-p99-µs")
			b.ReportMetric(micros(pct(mcpgo, 0.50)), "mcpgo-p50-µs")
			b.ReportMetric(micros(pct(mcpgo, 0.99)), "mcpgo-p99-µs")
			b.ReportMetric(micros(pct(bareLat, 0.50)), "floor-p50-µs")
			b.ReportMetric(micros(pct(handler, 0.50)), "handler-p50-µs")
			b.ReportMetric(micros(pct(handler, 0.99)), "handler-p99-µs")
			b.ReportMetric(float64(len(answer))/1024, "KiB/list")
		})
	}
}

// listBody is a tools/list request with the given params.
func listBody(params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}`
}

// nullWriter is an http.ResponseWriter that keeps only the status and the byte count.
type nullWriter struct {
	header http.Header
	status int
	n      int
}

func (w *nullWriter) Header() http.Header { return w.header }

func (w *nullWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *nullWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

func (w *nullWriter) Flush() {}

func mustRegistry(b *testing.B) *providers.Registry {
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		b.Fatal(err)
	}
	return reg
}

// BenchmarkToolsCallGC runs github_get_issue at 16 callers under GOGC=100 (Go's default)
// and GOGC=200 (what `switchboard serve` sets when the environment sets none),
// alternating in rounds of 1,000 calls in one run. Reported per setting: process CPU per
// call (client, hub and fake upstream together) and calls/s.
func BenchmarkToolsCallGC(b *testing.B) {
	h := newHub(b)
	const callers, round = 16, 1000
	sessions := make([]*session, callers)
	for i := range sessions {
		sessions[i] = h.session(b)
	}
	run(b, 4*callers, callers, func(w int) error { return sessions[w].callTool() })
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	settings := []int{100, 200}
	cpu := make([]time.Duration, len(settings))
	wall := make([]time.Duration, len(settings))
	calls := make([]int, len(settings))
	b.ResetTimer()
	for done := 0; done < max(b.N, 4*round); done += round * len(settings) {
		for i, gogc := range settings {
			debug.SetGCPercent(gogc)
			runtime.GC()
			c0 := processCPU(b)
			_, w := run(b, round, callers, func(w int) error { return sessions[w].callTool() })
			if err := h.audit.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			cpu[i] += processCPU(b) - c0
			wall[i] += w
			calls[i] += round
		}
	}
	b.StopTimer()
	for i, gogc := range settings {
		b.ReportMetric(micros(cpu[i]/time.Duration(calls[i])), fmt.Sprintf("gogc%d-cpu-µs/call", gogc))
		b.ReportMetric(float64(calls[i])/wall[i].Seconds(), fmt.Sprintf("gogc%d-calls/s", gogc))
	}
}

// BenchmarkColdStart measures a hub from nothing to its first answered tools/call: the
// database migrated (SQLite), the providers registered, a tenant and its GitHub
// connection made, the server listening, a session initialized, the scope built and
// github_get_issue answered with its audit row written.
func BenchmarkColdStart(b *testing.B) {
	var total time.Duration
	for range b.N {
		start := time.Now()
		h := newHub(b)
		s := h.session(b)
		if err := s.callTool(); err != nil {
			b.Fatal(err)
		}
		if err := h.audit.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-call")
}

// BenchmarkToolsCallConnections runs github_get_issue from 100 and 1,000 concurrent
// callers of one tenant, each its own MCP session on its own HTTP connection. Reported:
// answered calls/s, process CPU per answered call, the p50 latency (queueing, at this
// many callers) and the share the hub's admission control refused (at capacity, or too
// many of the tenant's calls waiting: a tool error saying to retry, after which the
// caller goes on with its next call). 4,000 and 10,000 ran out of the 20,000 file
// descriptors this machine allows a process: client, hub and fake upstream share it,
// with two ends of each connection of both hops.
func BenchmarkToolsCallConnections(b *testing.B) {
	h := newHub(b)
	for _, c := range []int{100, 1000} {
		b.Run(fmt.Sprintf("connections=%d", c), func(b *testing.B) {
			h.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxIdleConns: c}}
			sessions := make([]*session, c)
			for i := range sessions {
				sessions[i] = h.session(b)
			}
			var refused atomic.Int64
			call := func(w int) error {
				err := sessions[w].callTool()
				if err != nil && strings.Contains(err.Error(), "nothing was run; retry in") {
					refused.Add(1)
					return nil
				}
				return err
			}
			run(b, c, c, call)
			refused.Store(0)
			n := max(b.N, 2*c)
			b.ResetTimer()
			cpu0 := processCPU(b)
			lat, wall := run(b, n, c, call)
			if err := h.audit.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			cpu := processCPU(b) - cpu0
			b.StopTimer()
			answered := n - int(refused.Load())
			b.ReportMetric(float64(answered)/wall.Seconds(), "answered-calls/s")
			b.ReportMetric(micros(cpu/time.Duration(max(answered, 1))), "cpu-µs/answered-call")
			b.ReportMetric(100*float64(refused.Load())/float64(n), "refused-%")
			b.ReportMetric(micros(pct(lat, 0.50)), "p50-µs")
		})
	}
}
