package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/npmtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testport"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// everythingDir is where the test installs the reference server with npm.
func everythingDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "testdata", "everything")
}

// requireEverything installs server-everything, pinned by testdata/everything/package.json
// and its lock file, with npm ci when it is not
// installed. Without node and npm the test is skipped, except under CI=true, where it
// fails: CI always runs it.
func requireEverything(t *testing.T) string {
	t.Helper()
	npmtest.Require(t, "remote MCP test against server-everything")
	dir := everythingDir(t)
	npmtest.Install(t, dir)
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// startEverything runs server-everything over Streamable HTTP on port and waits until
// it accepts connections. The returned function kills it and waits for it to exit.
func startEverything(t *testing.T, script string, port int) func() {
	t.Helper()
	cmd := testproc.Command(t.Context(), "node", script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server-everything: %v", err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = testproc.Kill(cmd)
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("server-everything did not listen on %d within 30s:\n%s", port, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := testport.Free(1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEverythingServer registers the reference MCP server (server-everything from npm,
// over Streamable HTTP on loopback, which the test's guard allows), lists its tools
// through the router, calls echo and get-sum, and kills and restarts it: a call while
// it is down fails saying so, and the first call after the restart opens a new session
// by itself (the restarted server forgot the old one).
func TestEverythingServer(t *testing.T) {
	t.Parallel()
	script := requireEverything(t)
	port := freePort(t)
	stop := startEverything(t, script, port)
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))

	reg, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "everything", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	id := reg.Connection.ID
	names := r.toolNames(t, r.a)
	for _, want := range []string{"everything_echo", "everything_get-sum", "everything_get-tiny-image", "everything_get-structured-content"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if got := r.toolNames(t, r.b); len(got) != 0 {
		t.Errorf("another tenant's tools = %v, want none", got)
	}

	call := func(tool, args string) (string, error) {
		out, err := r.router.Execute(ctx, r.a, router.Request{Tool: tool, ConnectionID: id, Args: json.RawMessage(args)})
		if err != nil {
			return "", err
		}
		res := out.(*providers.ContentResult)
		if len(res.Content) == 0 {
			return "", errors.New("no content")
		}
		return res.Text(), nil
	}
	tests := []struct {
		name, tool, args, want string
		wantCode               switchboard.Code
	}{
		{name: "echo", tool: "everything_echo", args: `{"message":"hello hub"}`, want: "Echo: hello hub"},
		{name: "get-sum", tool: "everything_get-sum", args: `{"a":2,"b":40}`, want: "The sum of 2 and 40 is 42."},
		{name: "get-sum with a string", tool: "everything_get-sum", args: `{"a":"2","b":40}`, wantCode: switchboard.CodeInvalid},
		{name: "echo without message", tool: "everything_echo", args: `{}`, wantCode: switchboard.CodeInvalid},
	}
	for _, tt := range tests {
		got, err := call(tt.tool, tt.args)
		if tt.wantCode != "" {
			if switchboard.CodeOf(err) != tt.wantCode {
				t.Errorf("%s: err = %v, want %s", tt.name, err, tt.wantCode)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}

	stop()
	if _, err := call("everything_echo", `{"message":"anyone?"}`); switchboard.CodeOf(err) != switchboard.CodeUpstream || !strings.Contains(err.Error(), "everything") {
		t.Errorf("call while the server is down = %v, want upstream naming the server", err)
	}
	stop = startEverything(t, script, port)
	if got, err := call("everything_echo", `{"message":"back"}`); err != nil || got != "Echo: back" {
		t.Fatalf("echo after restart = %q, %v", got, err)
	}
	// A restart between two calls: the pooled session is unknown to the new process
	// (404), and the call reconnects and goes through.
	stop()
	startEverything(t, script, port)
	if got, err := call("everything_echo", `{"message":"again"}`); err != nil || got != "Echo: again" {
		t.Fatalf("echo after a restart between calls = %q, %v", got, err)
	}
}
