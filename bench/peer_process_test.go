package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testport"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// The peer is what people host today: the reference GitHub MCP server
// (@modelcontextprotocol/server-github, a stdio server) behind supergateway, which
// serves it over Streamable HTTP with one server process per session. Both are pinned
// in testdata/peers/package.json and its lock file (server-github 2025.4.8,
// supergateway 4.0.0), installed there with npm ci.

// peerToken is the GitHub token both sides call the fake upstream with.
const peerToken = "ghp_benchmarktoken"

// requirePeers installs the pinned peers with npm ci unless they are installed, and
// returns testdata/peers. Without node and npm it skips, except under CI=true, where it
// fails, as the repository's other Node tests do.
func requirePeers(tb testing.TB) string {
	tb.Helper()
	npmtest.Require(tb, "the peers (server-github behind supergateway)")
	dir, err := filepath.Abs(filepath.Join("testdata", "peers"))
	if err != nil {
		tb.Fatal(err)
	}
	npmtest.Install(tb, dir)
	return dir
}

// peerProcess is supergateway, and under it a shell and an MCP server per session.
type peerProcess struct {
	cmd    *exec.Cmd
	marker string // a path in the command line of each of its processes
	url    string // the MCP endpoint
}

// startPeer starts server-github behind supergateway, its fetch sent to upstreamURL by
// testdata/peers/redirect.mjs.
func startPeer(tb testing.TB, dir, upstreamURL string) *peerProcess {
	tb.Helper()
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-github", "dist", "index.js")
	return startGateway(tb, dir, fmt.Sprintf("node --import %s %s", filepath.Join(dir, "redirect.mjs"), script), script,
		"SWITCHBOARD_BENCH_GITHUB_URL="+upstreamURL)
}

// startGateway starts supergateway from dir's node_modules in stateful Streamable HTTP
// mode on a free loopback port, serving the stdio server that the shell command stdio
// starts (with env added; marker is a path in its command line), and returns once it
// accepts connections. The process and all it started are stopped when tb ends.
func startGateway(tb testing.TB, dir, stdio, marker string, env ...string) *peerProcess {
	tb.Helper()
	free, err := testport.Free(1)
	if err != nil {
		tb.Fatal(err)
	}
	port := strconv.Itoa(free)
	ctx, cancel := context.WithCancel(context.Background())
	// --logLevel none: at info, supergateway logs every message it relays.
	cmd := testproc.Command(ctx, "node", filepath.Join(dir, "node_modules", "supergateway", "dist", "index.js"),
		"--stdio", stdio, "--outputTransport", "streamableHttp", "--stateful", "--port", port, "--logLevel", "none")
	cmd.Env = append(append(os.Environ(), "GITHUB_PERSONAL_ACCESS_TOKEN="+peerToken), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		tb.Fatalf("start supergateway: %v", err)
	}
	p := &peerProcess{cmd: cmd, marker: marker, url: "http://127.0.0.1:" + port + "/mcp"}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		defer cancel()
		p.stop(exited)
	})
	testwait.Until(tb, "supergateway to listen on "+port, func() bool {
		select {
		case <-exited:
			tb.Fatalf("supergateway exited before it listened:\n%s", out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// stop asks supergateway to end (on SIGTERM it ends each session's process group),
// waits for it, then kills whatever of the peer's processes is left: supergateway
// starts each server detached, in a process group of its own.
func (p *peerProcess) stop(exited <-chan struct{}) {
	under := p.descendants()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = testproc.Kill(p.cmd)
		<-exited
	}
	for _, pid := range under {
		// Only processes still running the peer's commands: a pid may have been reused.
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmdline), p.marker) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// hub is the peer as a benchmark's sessions see it.
func (p *peerProcess) hub() *hub {
	return &hub{mcpURL: p.url, key: "unused",
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096}}}
}

// procStat is one process's parent and CPU time (user and system) from /proc/PID/stat:
// its own, and with its reaped children's.
type procStat struct {
	ppid int
	own  time.Duration
	cpu  time.Duration
}

func readProcStat(pid int) (procStat, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The command name, in parentheses, may hold spaces: the fields start after it.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 15 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	var ticks [4]int64 // utime, stime, cutime, cstime
	for i, v := range f[11:15] {
		ticks[i], _ = strconv.ParseInt(v, 10, 64)
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	own := time.Duration(ticks[0]+ticks[1]) * tick
	return procStat{ppid: ppid, own: own, cpu: own + time.Duration(ticks[2]+ticks[3])*tick}, true
}

// tree is supergateway and every process under it, with their CPU times.
func (p *peerProcess) tree() map[int]procStat {
	all := map[int]procStat{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if st, ok := readProcStat(pid); ok {
				all[pid] = st
			}
		}
	}
	children := map[int][]int{}
	for pid, st := range all {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	tree := map[int]procStat{}
	for queue := []int{p.cmd.Process.Pid}; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		if st, ok := all[pid]; ok {
			tree[pid] = st
			queue = append(queue, children[pid]...)
		}
	}
	return tree
}

// descendants are the pids of the processes under supergateway.
func (p *peerProcess) descendants() []int {
	var pids []int
	for pid := range p.tree() {
		if pid != p.cmd.Process.Pid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cpu is the CPU time supergateway and every process under it have used so far: the
// node processes (and their shells) that serve the peer's calls.
func (p *peerProcess) cpu() time.Duration {
	var total time.Duration
	for _, st := range p.tree() {
		total += st.cpu
	}
	return total
}

// gatewayCPU is the CPU time supergateway's own process has used so far, without the
// servers under it.
func (p *peerProcess) gatewayCPU() time.Duration {
	st, _ := readProcStat(p.cmd.Process.Pid)
	return st.own
}
