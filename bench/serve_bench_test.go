package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/database"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// The serve benchmarks run what an operator runs: the `switchboard serve` binary, built
// from this tree, in a process of its own; the fake GitHub in another (envUpstream);
// the callers here. Rate limits are on (each connection's bucket set by
// SWITCHBOARD_GITHUB_RATE_LIMIT), with the node's admission control, key throttle and
// audit as shipped.
const (
	// envServePostgres is the PostgreSQL server the PostgreSQL half runs on (a fresh
	// database is made on it for each run); unset, servePostgresDefault.
	envServePostgres     = "SWITCHBOARD_BENCH_POSTGRES_URL"
	servePostgresDefault = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	// serveKeys and serveConnections are how many API keys the callers share and how
	// many GitHub accounts the tenant has connected (each caller names one of them).
	serveKeys, serveConnections = 32, 32
	// serveRateLimit is each connection's bucket: on, and above what even a lone caller
	// asks of its connection on 2 cores, so that the figures are the hub's, not the
	// bucket's (with 200:400 the lone caller waited for tokens).
	serveRateLimit = "1000:2000"
	serveWindow    = 3 * time.Second
	// envServeProfile, set to a directory, has BenchmarkServe write there the hub's CPU
	// profile of the 1,024-caller window, taken from its admin listener.
	envServeProfile = "SWITCHBOARD_BENCH_SERVE_PROFILE"
)

// BenchmarkServe drives github_get_issue through `switchboard serve` with 1, 64, 256
// and 1,024 closed-loop callers, on SQLite and on PostgreSQL. The callers hold 32 API
// keys of the tenant's owner and name one of the owner's 32 GitHub connections in each
// call (the tool's connection argument). Reported per database and caller count:
// answered calls a second, p50 and p99, refusals (every one carries Retry-After, or the
// benchmark fails, as any other failed call does) and the share of the 64-caller
// figure at 256 and 1,024; at one caller, the p50 of the same request sent straight to
// the fake GitHub, and the p50 the hub adds to it. Run with
//
//	go test -run '^$' -bench BenchmarkServe -benchtime 1x -timeout 30m ./bench/
//
// (SWITCHBOARD_BENCH_POSTGRES_URL names another PostgreSQL server than the local one.)
func BenchmarkServe(b *testing.B) {
	bin := buildSwitchboard(b)
	upstream := startUpstreamProcess(b)
	pg := os.Getenv(envServePostgres)
	if pg == "" {
		pg = servePostgresDefault
	}
	for _, v := range []struct {
		name     string
		postgres bool
		env      []string
	}{
		{name: "db=sqlite"},
		{name: "db=postgres", postgres: true},
		{name: "db=postgres-audit-async", postgres: true, env: []string{"SWITCHBOARD_AUDIT_SYNCHRONOUS_COMMIT=off"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				dbURL := ""
				if v.postgres {
					dbURL = freshPostgresDB(b, pg)
				}
				benchServe(b, bin, upstream, dbURL, v.env...)
			}
		})
	}
}

// benchServe is one run of BenchmarkServe on a fresh node and database.
func benchServe(b *testing.B, bin, upstream, dbURL string, env ...string) {
	profile := os.Getenv(envServeProfile)
	if profile != "" {
		env = append(env, "SWITCHBOARD_ADMIN_ADDR=127.0.0.1:0")
	}
	srv := startServe(b, bin, upstream, dbURL, env...)
	sessions := srv.callers(b, 1024)
	closedLoop(b, sessions, 2*time.Second) // warm up: key cache, pooled clients, database connections

	direct := directLatency(b, upstream, 500)
	counts := []int{1, 64, 256, 1024}
	rate := map[int]float64{}
	for _, c := range counts {
		var prof chan []byte
		if profile != "" && c == counts[len(counts)-1] {
			prof = make(chan []byte, 1)
			go func() { prof <- srv.cpuProfile(serveWindow - 500*time.Millisecond) }()
		}
		cpu0 := (&hubProcess{pid: srv.pid}).cpu(b)
		outs, w := closedLoop(b, sessions[:c], serveWindow)
		cpu := (&hubProcess{pid: srv.pid}).cpu(b) - cpu0
		if prof != nil {
			path := filepath.Join(profile, strings.ReplaceAll(b.Name(), "/", "_")+fmt.Sprintf("-c%d.pprof", c))
			raw := <-prof
			if raw == nil {
				b.Fatalf("no CPU profile from the admin listener at %s", srv.adminAddr)
			}
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		lat, refused := merge(outs)
		var r refusals
		r.addAll(refused)
		rate[c] = float64(len(lat)) / w.Seconds()
		b.ReportMetric(rate[c], fmt.Sprintf("c%d-answered/s", c))
		b.ReportMetric(micros(pct(lat, 0.50)), fmt.Sprintf("c%d-p50-µs", c))
		b.ReportMetric(micros(pct(lat, 0.99)), fmt.Sprintf("c%d-p99-µs", c))
		b.ReportMetric(float64(r.total()), fmt.Sprintf("c%d-refused", c))
		b.ReportMetric(micros(cpu/time.Duration(max(len(lat), 1))), fmt.Sprintf("c%d-hub-cpu-µs/answered", c))
		b.ReportMetric(100*cpu.Seconds()/w.Seconds(), fmt.Sprintf("c%d-hub-cpu-%%", c))
		if c == 1 {
			b.ReportMetric(micros(direct), "c1-direct-p50-µs")
			b.ReportMetric(micros(pct(lat, 0.50)-direct), "c1-added-p50-µs")
		}
	}
	b.ReportMetric(100*rate[256]/rate[64], "c256-vs-c64-%")
	b.ReportMetric(100*rate[1024]/rate[64], "c1024-vs-c64-%")
	b.ReportMetric(0, "failed") // any failed call has failed the benchmark
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		// The machine's load when the run ended: on a shared machine, what the figures
		// competed with.
		var load float64
		if _, err := fmt.Sscan(string(raw), &load); err == nil {
			b.ReportMetric(load, "loadavg-1m")
		}
	}
}

// servedNode is a `switchboard serve` process as its callers see it.
type servedNode struct {
	base, mcpURL, admin string
	adminAddr           string // the admin listener's host:port, when it has one
	pid                 int
	client              *http.Client
}

// buildSwitchboard builds ./cmd/switchboard into a temporary directory.
func buildSwitchboard(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "switchboard")
	cmd := testproc.Command(b.Context(), "go", "build", "-o", bin, "./cmd/switchboard")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/switchboard: %v\n%s", err, out)
	}
	return bin
}

// startUpstreamProcess starts the fake GitHub in a process of its own and returns its URL.
func startUpstreamProcess(b *testing.B) string {
	b.Helper()
	_, lines := startChild(b, envUpstream+"=1")
	for line := range lines {
		if u, ok := strings.CutPrefix(line, "upstream "); ok {
			return u
		}
		b.Fatalf("the upstream process said %q", line)
	}
	b.Fatal("the upstream process ended before it was ready")
	return ""
}

// freshPostgresDB makes a database of its own on the server base names, dropped when
// the benchmark ends, and returns its URL.
func freshPostgresDB(b *testing.B, base string) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := database.Open(ctx, base)
	if err != nil {
		b.Fatalf("open %s: %v", base, err)
	}
	name := "sb_bench_" + strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, switchboard.RandomToken(10)))
	if err := admin.WithContext(ctx).Exec("CREATE DATABASE " + name).Error; err != nil {
		_ = database.Close(admin)
		b.Fatalf("create database %s: %v", name, err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = admin.WithContext(ctx).Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error
		_ = database.Close(admin)
	})
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

var (
	serveMCPURL    = regexp.MustCompile(`MCP URL \(tenant default\): (\S+)`)
	serveAdminKey  = regexp.MustCompile(`Admin API key \(shown once, store it now\): (sbk_\S+)`)
	serveAdminAddr = regexp.MustCompile(`Admin listener \(metrics, pprof\): http://(\S+)`)
)

// startServe starts `switchboard serve` on a free port with GitHub at upstream and the
// database dbURL (SQLite in a temporary directory when empty), stopped when the
// benchmark ends, and returns once it is ready.
func startServe(b *testing.B, bin, upstream, dbURL string, env ...string) *servedNode {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := b.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SWITCHBOARD_ADDR=" + addr, "SWITCHBOARD_DATA_DIR=" + filepath.Join(dir, "data"),
		"SWITCHBOARD_GITHUB_BASE_URL=" + upstream, "SWITCHBOARD_GITHUB_RATE_LIMIT=" + serveRateLimit,
		"SWITCHBOARD_LOG_LEVEL=error", "SWITCHBOARD_DRAIN_LEAD=0s",
		// The keys are all the owner's, and 1,024 sessions of one principal are more than the
		// default of 100 it may hold.
		"SWITCHBOARD_MCP_SESSIONS_PER_PRINCIPAL=1100"}
	if dbURL != "" {
		cmd.Env = append(cmd.Env, "SWITCHBOARD_DATABASE_URL="+dbURL)
	}
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	n := &servedNode{pid: cmd.Process.Pid, base: "http://" + addr, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096}}}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		_ = cmd.Wait()
		close(exited)
	}()
	b.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if b.Failed() {
			b.Logf("switchboard serve stderr:\n%s", stderr.String())
		}
	})
	deadline := time.After(time.Minute)
	wantAdmin := slices.ContainsFunc(env, func(v string) bool { return strings.HasPrefix(v, "SWITCHBOARD_ADMIN_ADDR=") })
	for n.mcpURL == "" || n.admin == "" || wantAdmin && n.adminAddr == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				b.Fatalf("switchboard serve ended before it printed its MCP URL and admin key: %s", stderr.String())
			}
			if m := serveMCPURL.FindStringSubmatch(line); m != nil {
				n.mcpURL = m[1]
			}
			if m := serveAdminKey.FindStringSubmatch(line); m != nil {
				n.admin = m[1]
			}
			if m := serveAdminAddr.FindStringSubmatch(line); m != nil {
				n.adminAddr = m[1]
			}
		case <-deadline:
			b.Fatal("switchboard serve printed no MCP URL and admin key within a minute")
		}
	}
	for {
		resp, err := n.client.Get(n.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return n
			}
		}
		select {
		case <-deadline:
			b.Fatalf("switchboard serve not ready within a minute: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// api sends a REST request as the admin and decodes a 2xx answer into out.
func (n *servedNode) api(b *testing.B, method, path string, body, out any) {
	b.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, n.base+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+n.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		b.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			b.Fatalf("%s %s: %v: %s", method, path, err, got)
		}
	}
}

// callers connects serveConnections GitHub accounts (mem-0, mem-1, …), makes serveKeys
// API keys, and opens n MCP sessions spread over the keys, session i calling on
// account mem-(i mod serveConnections).
func (n *servedNode) callers(b *testing.B, count int) []*session {
	b.Helper()
	for i := range serveConnections {
		n.api(b, http.MethodPost, "/api/connections", map[string]any{"provider": "github", "token": fmt.Sprintf("ghp_mem-%d", i)}, nil)
	}
	hubs := make([]*hub, serveKeys)
	for i := range hubs {
		var k struct {
			Key string `json:"key"`
		}
		n.api(b, http.MethodPost, "/api/keys", map[string]any{"name": fmt.Sprintf("caller %d", i)}, &k)
		if k.Key == "" {
			b.Fatal("POST /api/keys answered no key")
		}
		hubs[i] = &hub{mcpURL: n.mcpURL, key: k.Key, base: n.base, client: n.client}
	}
	sessions := make([]*session, count)
	for i := range sessions {
		sessions[i] = hubs[i%serveKeys].session(b)
		sessions[i].call = fmt.Sprintf(`{"name":"github_get_issue","arguments":{"connection":"mem-%d","owner":"octocat","repo":"Hello-World","issue_number":1347}}`, i%serveConnections)
	}
	return sessions
}

// directLatency is the p50 of n requests for the issue sent straight to the fake
// GitHub, one at a time: what a call costs without the hub.
func directLatency(b *testing.B, upstream string, n int) time.Duration {
	b.Helper()
	c := &http.Client{Transport: &http.Transport{}}
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		resp, err := c.Get(upstream + "/repos/octocat/Hello-World/issues/1347")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
	}
	runtime.KeepAlive(c)
	return pct(lat, 0.50)
}

// cpuProfile takes the hub's CPU profile for d from its admin listener (nil if it
// could not, which the benchmark reports).
func (n *servedNode) cpuProfile(d time.Duration) []byte {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", n.adminAddr, max(1, int(d.Seconds()))))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	return raw
}
