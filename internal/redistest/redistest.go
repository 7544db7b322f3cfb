// Package redistest starts a private redis-server for a test: Debian's binary
// (apt-get install redis-server), on a free loopback port, with no persistence, stopped
// when the test ends. Without the binary a test is skipped with a message saying so,
// except in CI (CI=true), where a missing redis-server fails it.
//
// Start from [Start], which answers a running [Server], and [Binary].
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/notrun"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its host:port; URL is redis://Addr/0.
	Addr string
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
	tb   testing.TB
}

// Binary returns the path of redis-server, or fails (CI=true) or skips tb when there
// is none.
func Binary(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("redis-server")
	if err == nil {
		return path
	}
	notrun.Skip(tb, "redis-server is not installed (apt-get install -y redis-server); the tests of limits shared through Redis did not run")
	return ""
}

// Start starts a redis-server on a free port and waits until it answers PING.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartAt(tb, FreeAddr(tb))
}

// StartAt starts a redis-server on addr (host:port), as Start does: to bring one back
// on the address of one that was stopped.
func StartAt(tb testing.TB, addr string) *Server {
	tb.Helper()
	bin := Binary(tb)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatalf("redistest: address %q: %v", addr, err)
	}
	cmd := exec.Command(bin, "--port", port, "--bind", host, "--save", "", "--appendonly", "no", "--logfile", "")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	s := &Server{Addr: addr, URL: "redis://" + addr + "/0", cmd: cmd, done: make(chan struct{}), tb: tb}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	tb.Cleanup(s.Stop)
	// The server is up once it answers PING as this process: a redis-server that lost
	// the race for the port exits, and another one on it would answer as itself.
	deadline := time.Now().Add(30 * time.Second)
	for {
		pid, err := ping(addr)
		if err == nil && pid == cmd.Process.Pid {
			return s
		}
		if err == nil {
			err = fmt.Errorf("answered by another redis-server (pid %d)", pid)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s did not answer PING within 30 s: %v", addr, err)
		}
		select {
		case <-s.done:
			tb.Fatalf("redis-server on %s exited at start (its port taken?)", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop kills the server, as a crash would, and waits for it to exit.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.tb.Errorf("redistest: redis-server (pid %d) did not exit 30 s after SIGKILL", s.cmd.Process.Pid)
	}
}

// FreeAddr returns a loopback address with a port nobody listens on right now.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// ping sends PING and INFO server in the Redis protocol, expects PONG, and returns
// the process_id INFO gives.
func ping(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\nINFO server\r\n")); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return 0, fmt.Errorf("answered %q", line)
	}
	// INFO's answer is a bulk string: $<length>, then the text of "key:value" lines.
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, fmt.Errorf("INFO answered %q", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server gave no process_id")
}
