package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// The overload benchmarks run the hub in a process of its own (this test binary run
// again with envHub set), so that what they measure is the hub: the closed-loop
// callers stay in the benchmark's process and the fake upstream runs in a third (with
// envUpstream set), as an agent and GitHub are elsewhere, and the hub's CPU time is
// read from its own process.
const (
	envHub        = "SWITCHBOARD_BENCH_HUB"         // the fake upstream's URL
	envUpstream   = "SWITCHBOARD_BENCH_UPSTREAM"    // set: serve the fake upstream
	envHubTenants = "SWITCHBOARD_BENCH_HUB_TENANTS" // slugs of more tenants to make, comma-separated
	// envHubCPUProfile, set when the benchmark runs, is where the hub's process writes
	// its CPU profile.
	envHubCPUProfile = "SWITCHBOARD_BENCH_HUB_CPUPROFILE"
	// envUpstreamDelay, a Go duration, is how long the fake GitHub takes to answer each
	// request (default none): GitHub's own time, which the benchmarks otherwise leave out.
	envUpstreamDelay = "SWITCHBOARD_BENCH_UPSTREAM_DELAY"
)

// parseUpstreamDelay is envUpstreamDelay's duration, 0 when it is not set.
func parseUpstreamDelay() (time.Duration, error) {
	v := os.Getenv(envUpstreamDelay)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 50ms", envUpstreamDelay, v)
	}
	return d, nil
}

// upstreamDelay is parseUpstreamDelay's duration; a bad value fails the benchmark.
func upstreamDelay(b *testing.B) time.Duration {
	d, err := parseUpstreamDelay()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// hubProcess is the hub's process, and one hub per tenant as its callers see it.
type hubProcess struct {
	pid     int
	tenants map[string]*hub // by slug; "" is the first tenant
}

// startHubProcess starts the hub's process, with a fake GitHub in a process of its own
// (so its answers do not wait behind the callers' goroutines in this one), and returns
// once the hub serves the first tenant and the others named.
func startHubProcess(b *testing.B, others ...string) *hubProcess {
	b.Helper()
	upstreamDelay(b) // a bad value fails here, not silently in the upstream's process
	_, lines := startChild(b, envUpstream+"=1")
	upstream := ""
	for line := range lines {
		if u, ok := strings.CutPrefix(line, "upstream "); ok {
			upstream = u
			break
		}
		b.Fatalf("the upstream process said %q", line)
	}
	if upstream == "" {
		b.Fatal("the upstream process ended before it was ready")
	}
	return startHubProcessAt(b, upstream, others...)
}

// startHubProcessAt starts the hub's process with GitHub's API at upstreamURL, and
// returns once it serves the first tenant and the others named.
func startHubProcessAt(b *testing.B, upstreamURL string, others ...string) *hubProcess {
	b.Helper()
	pid, lines := startChild(b, envHub+"="+upstreamURL, envHubTenants+"="+strings.Join(others, ","))
	p := &hubProcess{pid: pid, tenants: map[string]*hub{}}
	for line := range lines {
		if line == "ready" {
			if len(p.tenants) != 1+len(others) {
				b.Fatalf("the hub process serves %d tenants, want %d", len(p.tenants), 1+len(others))
			}
			return p
		}
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "tenant" {
			b.Fatalf("the hub process said %q", line)
		}
		slug := f[1]
		if slug == "-" {
			slug = ""
		}
		p.tenants[slug] = &hub{mcpURL: f[2], key: f[3], base: strings.SplitN(f[2], "/mcp/", 2)[0],
			client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096}}}
	}
	b.Fatal("the hub process ended before it was ready")
	return nil
}

// startChild runs this test binary again with env added, ended when the benchmark is
// (its stdin closes, then it is killed if it has not ended within a minute), and returns
// its pid and the lines it prints; the lines stop after 5 minutes without one.
func startChild(b *testing.B, env ...string) (int, <-chan string) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := testproc.Command(ctx, exe, "-test.run=^$", "-test.bench=^$", "-test.benchtime=1x")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		b.Fatal(err)
	}
	done := make(chan struct{})
	b.Cleanup(func() {
		_ = stdin.Close() // the child ends when its stdin closes
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
		cancel()
	})
	raw := make(chan string)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			raw <- sc.Text()
		}
		close(raw)
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for {
			select {
			case line, ok := <-raw:
				if !ok {
					return
				}
				select {
				case lines <- line:
				case <-time.After(5 * time.Minute): // no one reads any more
					for range raw {
					}
					return
				}
			case <-time.After(5 * time.Minute):
				fmt.Fprintln(os.Stderr, "child process: no line for 5 minutes")
				go func() {
					for range raw {
					}
				}()
				return
			}
		}
	}()
	return cmd.Process.Pid, lines
}

// serveUpstream is the fake GitHub's process: it prints "upstream URL" and serves
// until its stdin closes.
func serveUpstream() int {
	handler := fakeGitHubHandler()
	if d, _ := parseUpstreamDelay(); d > 0 { // the benchmark has checked it (startHubProcess)
		answer := handler
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(d)
			answer.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	fmt.Printf("upstream %s\n", srv.URL)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// cpu is the CPU time (user and system) the hub's process has used so far, from
// /proc/PID/stat (in clock ticks of 10 ms).
func (p *hubProcess) cpu(b *testing.B) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: the fields start after it.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", p.pid, s)
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick
}

// serveHub is the hub's process: the hub as the in-process benchmarks build it, with
// GitHub at the URL in envHub, a tenant per slug in envHubTenants besides the first,
// "tenant SLUG MCP_URL KEY" printed for each ("-" for the first) and then "ready". It
// serves until its stdin closes.
func serveHub() int {
	debug.SetGCPercent(200) // as `switchboard serve` runs when GOGC is not set
	code := 0
	if path := os.Getenv(envHubCPUProfile); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "hub process:", err)
			return 1
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	res := testing.Benchmark(func(b *testing.B) {
		fail := func(err error) {
			fmt.Fprintln(os.Stderr, "hub process:", err)
			code = 1
		}
		var timed handlerLatency
		h := buildHubAt(b, os.Getenv(envHub), true, timed.wrap)
		fmt.Printf("tenant - %s %s\n", h.mcpURL, h.key)
		for _, slug := range strings.Split(os.Getenv(envHubTenants), ",") {
			if slug == "" {
				continue
			}
			t, err := h.newTenant(slug)
			if err != nil {
				fail(err)
				return
			}
			fmt.Printf("tenant %s %s %s\n", slug, t.mcpURL, t.key)
		}
		fmt.Println("ready")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // EOF when the benchmark ends
		if err := h.audit.Flush(context.Background()); err != nil {
			fail(err)
		}
	})
	if res.N == 0 && code == 0 {
		fmt.Fprintln(os.Stderr, "hub process: the hub could not be built")
		return 1
	}
	return code
}
