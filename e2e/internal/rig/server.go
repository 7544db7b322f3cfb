package rig

import (
	"bufio"
	"context"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/internal/testport"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// BuildServer compiles ./cmd/switchboard into a temporary directory and returns the
// binary's path.
func BuildServer(t testing.TB) string {
	t.Helper()
	return BuildServerTagged(t, "")
}

// BuildServerTagged is BuildServer with build tags (go build -tags): conformancefixture
// adds the MCP conformance suite's fixture provider (internal/conformancefixture).
func BuildServerTagged(t testing.TB, tags string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	root := ModuleRoot(t)
	trackSources(t, root)
	bin := filepath.Join(t.TempDir(), "switchboard")
	cmd := testproc.Command(ctx, "go", "build", "-tags="+tags, "-o", bin, "./cmd/switchboard")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/switchboard: %v\n%s", err, out)
	}
	return bin
}

// trackSources reads every Go source and module file of the repository, and the
// client's script. go test caches a passing result keyed on the files the test process
// itself opened; the binary is built (and run.mjs run) by child processes, so without
// this a change to, say, the MCP adapter would leave a stale cached pass.
func trackSources(t testing.TB, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".mjs") ||
			name == "package-lock.json" || strings.Contains(path, string(filepath.Separator)+"web"+string(filepath.Separator)) {
			if _, err := os.ReadFile(path); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the sources under %s: %v", root, err)
	}
}

// ModuleRoot is the repository root: the nearest directory above the test's working
// directory (its package's) that holds go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod in %s or any directory above it", wd)
		}
	}
}

// Server is a running `switchboard serve`.
type Server struct {
	BaseURL  string // http://127.0.0.1:PORT
	MCPURL   string // the default tenant's MCP URL, as printed
	AdminKey string // the first admin API key, as printed
	// AdminLink is the one-time link to set the first admin's UI password, as printed.
	AdminLink string
	DataDir   string
	// Stdout and Stderr hold what the process printed so far.
	Stdout *testlog.Buffer
	Stderr *testlog.Buffer
	// Kill ends the process with SIGKILL, as a crash would, and waits for it to exit.
	Kill func()
	// Terminate sends SIGTERM and returns where the process's exit goes.
	Terminate func() <-chan error
}

var (
	mcpURLLine   = regexp.MustCompile(`MCP URL \(tenant default\): (\S+)`)
	adminKeyLine = regexp.MustCompile(`Admin API key \(shown once, store it now\): (sbk_\S+)`)
	adminLinkRe  = regexp.MustCompile(`Set the admin's UI password \([^)]*\): (\S+/invite/sbi_\S+)`)
)

// StartServer runs `bin serve` on a free loopback port (or env's SWITCHBOARD_ADDR) with
// its own data directory and the given extra environment, reads the MCP URL and admin
// key it prints (a process joining an existing database prints none), and waits for
// /readyz. The process group is killed when the test ends; on failure its output is
// logged.
func StartServer(t testing.TB, bin string, env map[string]string) *Server {
	t.Helper()
	addr := env["SWITCHBOARD_ADDR"] // a test running several processes picks their addresses first
	if addr == "" {
		addr = FreeAddr(t)
	}
	s := &Server{BaseURL: "http://" + addr, DataDir: filepath.Join(t.TempDir(), "data"), Stdout: &testlog.Buffer{}, Stderr: &testlog.Buffer{}}

	cmd := exec.Command(bin, "serve")
	cmd.Dir = filepath.Dir(s.DataDir)
	// A node stops at once (SWITCHBOARD_DRAIN_LEAD=0s) unless env says otherwise: a test
	// with no balancer watching has nothing to wait for. The built-in catalog is off
	// unless env turns it on: a test starts many nodes, and only the catalog's own use it.
	cmd.Env = append(WithoutSwitchboardEnv(os.Environ()), "SWITCHBOARD_ADDR="+addr, "SWITCHBOARD_DATA_DIR="+s.DataDir, "SWITCHBOARD_DRAIN_LEAD=0s", "SWITCHBOARD_CATALOG=off")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = nil
	cmd.Stderr = s.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = testproc.WaitDelay // stderr's copy ends even if something of the group outlives it
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s serve: %v", bin, err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			_, _ = s.Stdout.Write(append(sc.Bytes(), '\n'))
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	var killed atomic.Bool
	s.Kill = func() {
		killed.Store(true)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		testwait.Recv(t, exited, "switchboard serve to exit after SIGKILL")
	}
	s.Terminate = func() <-chan error {
		killed.Store(true) // the test waits for the exit itself
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		return exited
	}
	t.Cleanup(func() {
		if !killed.Load() {
			stopServer(t, cmd, exited)
		}
		if t.Failed() {
			t.Logf("switchboard serve stdout:\n%s", RedactKey(s.Stdout.String()))
			t.Logf("switchboard serve stderr:\n%s", s.Stderr.String())
		}
	})

	deadline := time.After(60 * time.Second)
	// A process joining a database another one set up prints no key and no link.
	joined := false
	for s.MCPURL == "" || (!joined && (s.AdminKey == "" || s.AdminLink == "")) {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("switchboard serve closed its stdout before printing the MCP URL and admin key (stdout so far:\n%s)", RedactKey(s.Stdout.String()))
			}
			if m := mcpURLLine.FindStringSubmatch(line); m != nil {
				s.MCPURL = m[1]
			}
			if m := adminKeyLine.FindStringSubmatch(line); m != nil {
				s.AdminKey = m[1]
			}
			if m := adminLinkRe.FindStringSubmatch(line); m != nil {
				s.AdminLink = m[1]
			}
			if strings.HasPrefix(line, "Admin API key: shown on first start only") {
				joined = true
			}
		case <-deadline:
			t.Fatalf("switchboard serve printed no %q, %q and %q lines within 60 s", "MCP URL (tenant default): …", "Admin API key (shown once, store it now): sbk_…", "Set the admin's UI password (…): …/invite/sbi_…")
		}
	}
	// Keep draining stdout so the server never blocks on a full pipe.
	go func() {
		for range lines {
		}
	}()
	WaitReady(t, s.BaseURL+"/readyz", 30*time.Second)
	return s
}

// RedactKey hides admin keys in logged output.
func RedactKey(s string) string {
	return regexp.MustCompile(`(sb[kis])_\S+`).ReplaceAllString(s, "${1}_[redacted]")
}

// WithoutSwitchboardEnv drops inherited SWITCHBOARD_* variables so the server sees only
// the configuration the test gives it.
func WithoutSwitchboardEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SWITCHBOARD_") {
			out = append(out, kv)
		}
	}
	return out
}

// FreeAddr returns a loopback address with a port nobody listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return testport.Addr(t)
}

// WaitReady polls url until it answers 200.
func WaitReady(t testing.TB, url string, within time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("GET %s did not answer 200 within %s (last: %s)", url, within, last)
}

// stopServer sends SIGTERM to the server's process group, then SIGKILL after a minute:
// a call still under way may hold the drain for its 30 s and the shutdown takes 8 s
// more, so a shorter bound failed tests that left a call running.
func stopServer(t testing.TB, cmd *exec.Cmd, exited <-chan error) {
	t.Helper()
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Errorf("switchboard serve did not stop within a minute of SIGTERM; killing it")
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Errorf("switchboard serve (pid %d) survived SIGKILL", pgid)
		}
	}
}
