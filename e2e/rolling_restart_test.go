package e2e

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/notrun"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/internal/testproc"
)

// requireHAProxy returns the path of haproxy (Debian's package), skipping the test
// without it, or failing it under CI=true.
func requireHAProxy(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("haproxy")
	if err == nil {
		return path
	}
	notrun.Skip(t, "the rolling restart test needs haproxy on PATH (apt-get install haproxy); it did not run")
	return ""
}

// haproxy is the shipped deploy/haproxy/haproxy.cfg run on 127.0.0.1 in front of
// nodes, with a stats socket the test reads the servers' states from.
type haproxy struct {
	url    string
	socket string
	names  []string
}

// startHAProxy runs the shipped configuration, its frontend and servers moved to
// loopback addresses and nothing else changed (checks, fall, rise, retries).
func startHAProxy(t *testing.T, bin string, nodes []string) *haproxy {
	t.Helper()
	shipped, err := os.ReadFile(filepath.Join(moduleRoot(t), "deploy", "haproxy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := &haproxy{url: "http://" + freeAddr(t), socket: filepath.Join(dir, "stats.sock")}
	var out []string
	servers, binds := 0, 0
	for _, line := range strings.Split(string(shipped), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "bind":
			line = "    bind " + strings.TrimPrefix(h.url, "http://")
			binds++
		case len(fields) >= 3 && fields[0] == "server" && servers < len(nodes):
			line = fmt.Sprintf("    server %s %s", fields[1], strings.TrimPrefix(nodes[servers], "http://"))
			h.names = append(h.names, fields[1])
			servers++
		case len(fields) > 0 && fields[0] == "global":
			line += "\n    stats socket " + h.socket + " mode 600 level user"
		}
		out = append(out, line)
	}
	if binds != 1 || servers != len(nodes) {
		t.Fatalf("haproxy.cfg has %d bind lines and %d servers; want 1 and %d", binds, servers, len(nodes))
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = testproc.WaitDelay
	if err := cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("haproxy:\n%s", logs.String())
		}
	})
	h.waitUp(t, h.names...)
	return h
}

// states returns each server's status (UP, DOWN, "UP 1/2", …) from the stats socket.
func (h *haproxy) states(t *testing.T) map[string]string {
	t.Helper()
	conn, err := net.DialTimeout("unix", h.socket, time.Second)
	if err != nil {
		return nil // not listening yet
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil
	}
	rd := bufio.NewReader(conn)
	header, err := rd.ReadString('\n')
	if err != nil {
		return nil
	}
	r := csv.NewReader(rd)
	r.FieldsPerRecord = -1
	cols := strings.Split(strings.TrimPrefix(strings.TrimSpace(header), "# "), ",")
	status := -1
	for i, c := range cols {
		if c == "status" {
			status = i
		}
	}
	out := map[string]string{}
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		if len(rec) > status && status >= 0 && rec[0] == "nodes" {
			out[rec[1]] = rec[status]
		}
	}
	return out
}

// waitUp waits until HAProxy sends requests to every server named.
func (h *haproxy) waitUp(t *testing.T, names ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st := h.states(t)
		up := 0
		for _, n := range names {
			if st[n] == "UP" {
				up++
			}
		}
		if up == len(names) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy's servers are %v a minute on; want %v UP", st, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// load sends REST tool calls through the balancer from several clients until stopped,
// and keeps every answer that is not the call's result.
type load struct {
	mu       sync.Mutex
	ok       int
	failures []string
	stop     chan struct{}
	done     sync.WaitGroup
}

func startLoad(url, key string, clients int) *load {
	l := &load{stop: make(chan struct{})}
	client := &http.Client{Timeout: time.Minute}
	for range clients {
		l.done.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/tools/github_get_me/call", strings.NewReader(`{"arguments":{}}`))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				var failure string
				if err != nil {
					failure = err.Error()
				} else {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						failure = fmt.Sprintf("%d Retry-After %q %.200s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
					}
				}
				cancel()
				l.mu.Lock()
				if failure == "" {
					l.ok++
				} else {
					l.failures = append(l.failures, failure)
				}
				l.mu.Unlock()
			}
		})
	}
	return l
}

func (l *load) finish() (int, []string) {
	close(l.stop)
	l.done.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ok, l.failures
}

// TestRollingRestartBehindHAProxy restarts three real `switchboard serve` processes on
// one PostgreSQL database one after another (SIGTERM, exit, start again on the same
// port), behind the shipped HAProxy configuration run by Debian's haproxy, while
// clients call a tool through it without pause: not one call fails. Each node's /readyz
// answers 503 from SIGTERM while it still serves, for its default drain lead, so HAProxy
// takes it out before it refuses anything or closes its port.
func TestRollingRestartBehindHAProxy(t *testing.T) {
	t.Parallel()
	base := requireFleetDatabase(t)
	haproxyBin := requireHAProxy(t)
	bin := buildServer(t)
	dbURL, _ := freshPostgres(t, base)
	gh := newFleetGitHub(t)
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	keyFile := filepath.Join(t.TempDir(), "keys", "master.key")
	env := func(addr string) map[string]string {
		return map[string]string{
			"SWITCHBOARD_ADDR":            addr,
			"SWITCHBOARD_DATABASE_URL":    dbURL,
			"SWITCHBOARD_KEY_FILE":        keyFile,
			"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
			"SWITCHBOARD_LOG_LEVEL":       "warn",
			"SWITCHBOARD_DRAIN_LEAD":      "", // the default, which the shipped HAProxy's checks are timed against
		}
	}
	nodes := []*server{startServer(t, bin, env(addrs[0]))}
	admin := nodes[0].AdminKey
	nodes = append(nodes, startServer(t, bin, env(addrs[1])), startServer(t, bin, env(addrs[2])))
	if status, body := (&apiClient{Base: nodes[0].BaseURL, Key: admin}).Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	lb := startHAProxy(t, haproxyBin, []string{nodes[0].BaseURL, nodes[1].BaseURL, nodes[2].BaseURL})

	l := startLoad(lb.url, admin, 8)
	for i := range nodes {
		exited := nodes[i].Terminate()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("node %d exited with %v after SIGTERM", i, err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("node %d did not exit after SIGTERM", i)
		}
		nodes[i] = startServer(t, bin, env(addrs[i]))
		lb.waitUp(t, lb.names...)
	}
	ok, failures := l.finish()
	t.Logf("%d calls through the balancer during the rolling restart, %d failed", ok+len(failures), len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d calls failed during the rolling restart; the first: %q", len(failures), ok+len(failures), failures[:min(len(failures), 5)])
	}
	if ok == 0 {
		t.Error("no call was answered through the balancer")
	}
}
