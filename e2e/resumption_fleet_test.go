package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestCallResumesOnAnotherNodeBehindHAProxy runs three `switchboard serve` processes on
// one PostgreSQL database behind the shipped HAProxy configuration. A client calls a
// tool on an SSE stream (2025-11-25, so the stream starts with a priming event), and
// leaves after that event while GitHub holds the call's request. It comes back at once
// with GET and Last-Event-ID on another node, and leaves again; GitHub then answers,
// and the node that ran the call is killed with SIGKILL. The client reconnects through
// the balancer once more, reaches a live node, and is given the call's answer.
func TestCallResumesOnAnotherNodeBehindHAProxy(t *testing.T) {
	t.Parallel()
	base := requireFleetDatabase(t)
	haproxyBin := requireHAProxy(t)
	bin := buildServer(t)
	dbURL, db := freshPostgres(t, base)

	inner, _ := fakeGitHub(t)
	issue := fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum)
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == issue {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(gh.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})

	keyFile := filepath.Join(t.TempDir(), "keys", "master.key")
	var nodes []*server
	var admins []string
	for range 3 {
		admin := freeAddr(t)
		admins = append(admins, admin)
		nodes = append(nodes, startServer(t, bin, map[string]string{
			"SWITCHBOARD_DATABASE_URL":    dbURL,
			"SWITCHBOARD_KEY_FILE":        keyFile,
			"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
			"SWITCHBOARD_ADMIN_ADDR":      admin,
			"SWITCHBOARD_LOG_LEVEL":       "warn",
		}))
	}
	key := nodes[0].AdminKey
	if status, body := (&apiClient{Base: nodes[0].BaseURL, Key: key}).Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: %d %s", status, body)
	}
	lb := startHAProxy(t, haproxyBin, []string{nodes[0].BaseURL, nodes[1].BaseURL, nodes[2].BaseURL})
	mcpURL := lb.url + strings.TrimPrefix(nodes[0].MCPURL, nodes[0].BaseURL)

	const version = "2025-11-25"
	request := func(ctx context.Context, method, session, body string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, method, mcpURL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "application/json, text/event-stream")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", version)
		}
		return req
	}
	send := func(session, body string) *http.Response {
		resp, err := http.DefaultClient.Do(request(t.Context(), http.MethodPost, session, body))
		if err != nil {
			t.Fatalf("POST %s: %v", body, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %s %s", body, resp.Status, b)
		}
		return resp
	}
	session := send("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`).Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("initialize answered without an Mcp-Session-Id")
	}
	send(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The call, on its own connection, which the client drops after the priming event.
	callCtx, leave := context.WithCancel(t.Context())
	defer leave()
	tr := &http.Transport{}
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"github_get_issue","arguments":{"owner":%q,"repo":%q,"issue_number":%d}}}`, githubOwner, githubRepo, githubIssueNum)
	resp, err := (&http.Client{Transport: tr}).Do(request(callCtx, http.MethodPost, session, call))
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("tools/call answered %s %q %s; want an SSE stream", resp.Status, resp.Header.Get("Content-Type"), b)
	}
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	primed, ok := strings.CutPrefix(strings.TrimSpace(first), "id: ")
	if err != nil || !ok || primed == "" {
		t.Fatalf("the call's stream starts with %q, %v; want a priming event's id", first, err)
	}
	testwait.Recv(t, arrived, "the call's request at GitHub")
	// The node running the call is the one with an SSE stream open.
	running := -1
	for i, admin := range admins {
		if openStreams(t, admin) == 1 {
			running = i
		}
	}
	if running < 0 {
		t.Fatal("no node has the call's stream open")
	}
	resp.Body.Close()
	leave()
	tr.CloseIdleConnections()

	kept := func(last bool) func() bool {
		return func() bool {
			var n int64
			q := db.Table("mcp_stream_events").Where("session_id = ?", session)
			if last {
				q = q.Where("last")
			}
			return q.Count(&n).Error == nil && n > 0
		}
	}
	resume := func(ctx context.Context) *http.Response {
		get := request(ctx, http.MethodGet, session, "")
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Last-Event-ID", primed)
		resp, err := http.DefaultClient.Do(get)
		if err != nil {
			t.Fatalf("GET with Last-Event-ID: %v", err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("GET with Last-Event-ID: %s %s", resp.Status, b)
		}
		return resp
	}

	// The client comes back at once, while the call still waits at GitHub, and the
	// balancer sends it to another node: that node asks the call's node to keep the
	// call's stream where it reads it (the call's node has not seen its client leave:
	// HAProxy keeps the node's connection until a write fails). A resumption that the
	// balancer sent back to the call's node (two streams open there) is tried again.
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithCancel(t.Context())
		back := resume(ctx)
		elsewhere := false
		testwait.Until(t, "the resumption's stream open on a node", func() bool {
			open := 0.0
			for _, admin := range admins {
				open += openStreams(t, admin)
			}
			elsewhere = openStreams(t, admins[running]) == 1
			return open == 2
		})
		if elsewhere {
			testwait.Until(t, "the call's stream kept in the database for the other node", kept(false))
		}
		back.Body.Close()
		cancel()
		if elsewhere {
			break
		}
		if attempt == 3 {
			t.Fatal("the balancer sent every resumption to the call's node")
		}
	}
	close(release)
	released = true
	testwait.Until(t, "the call's end kept in the database", kept(true))
	nodes[running].Kill()

	// The client comes back through the balancer: another node resumes the stream.
	resumed := resume(t.Context())
	defer resumed.Body.Close()
	sc := bufio.NewScanner(resumed.Body)
	sc.Buffer(nil, 1<<20)
	var answer string
	for answer == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"id":2`) {
			answer = data
		}
	}
	if !strings.Contains(answer, `"result"`) || !strings.Contains(answer, githubIssueTitle) {
		t.Fatalf("the resumed stream's answer to the call = %q (scan: %v); want its result with the issue %q", answer, sc.Err(), githubIssueTitle)
	}
}
