package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The connections benchmark runs its clients in a second process (this test binary run
// again with envClients set), so that the hub's process holds only its own end of each
// connection: the two ends of 10,000 connections in one process came near the 20,000
// file descriptors a process may have here.
const (
	envClients    = "SWITCHBOARD_BENCH_CLIENTS"     // how many connections to open
	envClientsURL = "SWITCHBOARD_BENCH_CLIENTS_URL" // the MCP URL
	envClientsKey = "SWITCHBOARD_BENCH_CLIENTS_KEY" // the API key
)

// clientProcess is the second process holding the connections open.
type clientProcess struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
}

// startClients starts the client process and returns once it says every connection is
// open with its session initialized.
func startClients(b *testing.B, h *hub, n int) *clientProcess {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), envClients+"="+strconv.Itoa(n), envClientsURL+"="+h.mcpURL, envClientsKey+"="+h.key)
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
		b.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "ready "+strconv.Itoa(n) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			b.Fatalf("client process: %q, want %q", line, "ready "+strconv.Itoa(n))
		}
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatalf("client process did not open %d connections in 10 minutes", n)
	}
	return &clientProcess{cmd: cmd, stdin: stdin}
}

// stop closes the client process's stdin, on which it ends and closes its connections.
func (c *clientProcess) stop(b *testing.B) {
	b.Helper()
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			b.Fatalf("client process: %v", err)
		}
	case <-time.After(time.Minute):
		_ = c.cmd.Process.Kill()
		b.Fatal("client process did not end within a minute of its stdin closing")
	}
}

// runClients is the client process: it opens the connections the environment asks for,
// initializes a session over each, prints "ready N" and holds them until stdin closes.
func runClients() int {
	n, err := strconv.Atoi(os.Getenv(envClients))
	if err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want a positive count\n", envClients, os.Getenv(envClients))
		return 2
	}
	target, err := url.Parse(os.Getenv(envClientsURL))
	if err != nil || target.Host == "" {
		fmt.Fprintf(os.Stderr, "%s=%q: want the MCP URL\n", envClientsURL, os.Getenv(envClientsURL))
		return 2
	}
	key := os.Getenv(envClientsKey)
	conns := make([]*idleConn, n)
	var next atomic.Int64
	errs := make(chan error, 32)
	for range 32 {
		go func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					errs <- nil
					return
				}
				c, err := dialSession(target, key)
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				conns[i] = c
			}
		}()
	}
	for range 32 {
		if err := <-errs; err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("ready %d\n", n)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // EOF when the hub's side closes it
	for _, c := range conns {
		_ = c.conn.Close()
	}
	return 0
}

// idleConn is one open HTTP/1.1 connection with an initialized MCP session on it.
type idleConn struct {
	conn    net.Conn
	session string
}

// dialSession opens a connection and, over it, initializes an MCP session as a client
// would: initialize, then notifications/initialized, both kept alive.
func dialSession(target *url.URL, key string) (*idleConn, error) {
	conn, err := net.DialTimeout("tcp", target.Host, 30*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Minute))
	r := bufio.NewReader(conn)
	c := &idleConn{conn: conn}
	post := func(body string) (*http.Response, error) {
		var req bytes.Buffer
		fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n", target.RequestURI(), target.Host, key, len(body))
		if c.session != "" {
			fmt.Fprintf(&req, "Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n", c.session)
		}
		req.WriteString("\r\n")
		req.WriteString(body)
		if _, err := conn.Write(req.Bytes()); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode/100 != 2 {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return resp, err
	}
	resp, err := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if c.session = resp.Header.Get("Mcp-Session-Id"); c.session == "" {
		conn.Close()
		return nil, fmt.Errorf("initialize: no Mcp-Session-Id")
	}
	if resp, err = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		conn.Close()
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	if resp.Close {
		conn.Close()
		return nil, fmt.Errorf("the hub closed the connection")
	}
	_ = conn.SetDeadline(time.Time{})
	return c, nil
}
