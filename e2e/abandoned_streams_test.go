package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestAbandonedStreamsAreReapedBehindAProxy opens several MCP GET streams through a
// proxy that, like HAProxy in tunnel mode, keeps its connection to the node when a
// client leaves, and lets the clients go without a DELETE: the node's heartbeats find
// them gone, and its open-stream gauge comes back to zero.
func TestAbandonedStreamsAreReapedBehindAProxy(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	admin := freeAddr(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_ADMIN_ADDR": admin, "SWITCHBOARD_MCP_HEARTBEAT": "100ms"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := newRRProxy(t, l, []string{srv.BaseURL})
	proxy.hold = true
	mcpURL := proxy.URL + strings.TrimPrefix(srv.MCPURL, srv.BaseURL)

	const streams = 4
	var leave []func()
	for i := range streams {
		id := initSession(t, mcpURL, srv.AdminKey)
		tr := &http.Transport{}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, mcpURL, nil)
		req.Header.Set("Authorization", "Bearer "+srv.AdminKey)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("MCP-Protocol-Version", mcpVersion)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("GET stream %d: %v", i, err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("GET stream %d: %s %s", i, resp.Status, b)
		}
		// The stream is open once its first heartbeat comes through the proxy.
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != ": ping\n" {
			t.Fatalf("first line of stream %d = %q, %v; want a heartbeat", i, line, err)
		}
		// The client leaves without a DELETE: its connection to the proxy closes.
		leave = append(leave, func() {
			resp.Body.Close()
			tr.CloseIdleConnections()
		})
	}
	if open := openStreams(t, admin); open != streams {
		t.Fatalf("switchboard_mcp_open_streams with %d clients streaming = %v, want %d", streams, open, streams)
	}
	for _, f := range leave {
		f()
	}
	testwait.Until(t, "switchboard_mcp_open_streams back to 0 after the clients left", func() bool {
		return openStreams(t, admin) == 0
	})
}

// mcpVersion is the session-based MCP version the raw requests speak.
const mcpVersion = "2025-06-18"

// initSession initializes an MCP session at url with key and returns its id.
func initSession(t *testing.T, url, key string) string {
	t.Helper()
	post := func(id, body string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("MCP-Protocol-Version", mcpVersion)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %s %s", body, resp.Status, b)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcpVersion+`","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize answered without an Mcp-Session-Id")
	}
	post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

var openStreamsLine = regexp.MustCompile(`(?m)^switchboard_mcp_open_streams (\S+)$`)

// openStreams reads switchboard_mcp_open_streams from the admin listener at addr.
func openStreams(t *testing.T, addr string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := openStreamsLine.FindSubmatch(b)
	if m == nil {
		t.Fatalf("metrics have no switchboard_mcp_open_streams:\n%s", b)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("switchboard_mcp_open_streams %q: %v", m[1], err)
	}
	return v
}
