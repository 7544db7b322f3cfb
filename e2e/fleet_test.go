package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/internal/notrun"
	"github.com/switchboard-hub/switchboard/internal/redistest"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// fleetGitHub is the fake GitHub of the fleet test (fakeGitHub's answers), which also
// notes when each request arrived and, while limited, answers GET of an issue with
// 429 and Retry-After: 60, as GitHub's rate limits do.
type fleetGitHub struct {
	*httptest.Server
	mu      sync.Mutex
	got     []fleetRequest
	limited bool
}

type fleetRequest struct {
	Method, Path, Token string
	At                  time.Time
}

func newFleetGitHub(t *testing.T) *fleetGitHub {
	t.Helper()
	inner, _ := fakeGitHub(t)
	f := &fleetGitHub{}
	issue := fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.got = append(f.got, fleetRequest{Method: r.Method, Path: r.URL.Path, Token: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), At: time.Now()})
		limited := f.limited
		f.mu.Unlock()
		if limited && r.Method == http.MethodGet && r.URL.Path == issue {
			w.Header().Set("Retry-After", "60")
			w.Header().Set("X-RateLimit-Limit", "5000")
			w.Header().Set("X-RateLimit-Remaining", "4990")
			writeJSON(w, http.StatusTooManyRequests, map[string]string{
				"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
				"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
			})
			return
		}
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fleetGitHub) limit(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited = on
}

// requests returns the requests of method and path with token that arrived at or after since.
func (f *fleetGitHub) requests(method, path, token string, since time.Time) []fleetRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fleetRequest
	for _, r := range f.got {
		if r.Method == method && r.Path == path && (token == "" || r.Token == token) && !r.At.Before(since) {
			out = append(out, r)
		}
	}
	return out
}

// fleetClient drives e2e/client/fleet.mjs: one command at a time, one answer each.
type fleetClient struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan string
	stderr *testlog.Buffer
	seq    int
}

func startFleetClient(t *testing.T) *fleetClient {
	t.Helper()
	cmd := testproc.Command(t.Context(), "node", "fleet.mjs")
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "TIMEOUT_MS=60000")
	c := &fleetClient{t: t, lines: make(chan string, 16), stderr: &testlog.Buffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node fleet.mjs: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		_ = c.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = testproc.Kill(cmd)
			testwait.Recv(t, done, "node fleet.mjs to exit after SIGKILL")
		}
		if t.Failed() {
			t.Logf("fleet.mjs stderr:\n%s", c.stderr.String())
		}
	})
	return c
}

// try sends a command and decodes its answer into out; it returns the command's error.
func (c *fleetClient) try(op string, args map[string]any, out any) error {
	c.t.Helper()
	c.seq++
	cmd := map[string]any{"seq": c.seq, "op": op}
	for k, v := range args {
		cmd[k] = v
	}
	b, _ := json.Marshal(cmd)
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("fleet.mjs %s: %v (stderr %s)", op, err, c.stderr.String())
	}
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("fleet.mjs exited during %s; stderr:\n%s", op, c.stderr.String())
		}
		var head struct {
			Seq   int    `json:"seq"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil || head.Seq != c.seq {
			c.t.Fatalf("fleet.mjs answered %q to command %d (%s): %v", line, c.seq, op, err)
		}
		if !head.OK {
			return fmt.Errorf("%s", head.Error)
		}
		if out != nil {
			if err := json.Unmarshal([]byte(line), out); err != nil {
				c.t.Fatalf("fleet.mjs %s: decode %q: %v", op, line, err)
			}
		}
		return nil
	case <-time.After(3 * time.Minute):
		c.t.Fatalf("fleet.mjs did not answer %s within 3 minutes; stderr:\n%s", op, c.stderr.String())
	}
	return nil
}

// do is try for a command that must succeed.
func (c *fleetClient) do(op string, args map[string]any, out any) {
	c.t.Helper()
	if err := c.try(op, args, out); err != nil {
		c.t.Fatalf("fleet.mjs %s %v: %v", op, args, err)
	}
}

type toolResult struct {
	IsError    bool           `json:"isError"`
	Text       string         `json:"text"`
	Structured map[string]any `json:"structured"`
}

func (c *fleetClient) call(id, tool string, args map[string]any) toolResult {
	c.t.Helper()
	var r toolResult
	c.do("call", map[string]any{"id": id, "tool": tool, "args": args}, &r)
	return r
}

func (c *fleetClient) changed(id string) int {
	c.t.Helper()
	var r struct{ Count int }
	c.do("changed", map[string]any{"id": id}, &r)
	return r.Count
}

// waitChanged waits for a list_changed after the count before; the 10 s bound only ends
// a test that would hang. It returns how long it took.
func (c *fleetClient) waitChanged(id string, before int, what string) time.Duration {
	c.t.Helper()
	var r struct {
		Count    int
		MS       int64 `json:"ms"`
		TimedOut bool  `json:"timedOut"`
	}
	c.do("waitChanged", map[string]any{"id": id, "after": before, "timeoutMs": 10000}, &r)
	if r.TimedOut {
		c.t.Fatalf("session %s got no notifications/tools/list_changed within 10 s after %s", id, what)
	}
	return time.Duration(r.MS) * time.Millisecond
}

// sameTools lists the tools on every session in ids and checks that all list exactly
// the same tools, schemas included; it returns the names.
func (c *fleetClient) sameTools(when string, ids ...string) []string {
	c.t.Helper()
	var first json.RawMessage
	for _, id := range ids {
		var r struct {
			Tools json.RawMessage `json:"tools"`
		}
		c.do("tools", map[string]any{"id": id}, &r)
		if first == nil {
			first = r.Tools
			continue
		}
		var a, b any
		_ = json.Unmarshal(first, &a)
		_ = json.Unmarshal(r.Tools, &b)
		if diff := cmp.Diff(a, b); diff != "" {
			c.t.Errorf("%s: session %s lists other tools than session %s (-%s +%s):\n%s", when, id, ids[0], ids[0], id, diff)
		}
	}
	var tools []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(first, &tools)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// toolSchema returns one tool's input schema as session id lists it.
func (c *fleetClient) toolSchema(id, name string) map[string]any {
	c.t.Helper()
	var r struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	c.do("tools", map[string]any{"id": id}, &r)
	for _, tl := range r.Tools {
		if tl.Name == name {
			return tl.InputSchema
		}
	}
	c.t.Fatalf("session %s does not list %s", id, name)
	return nil
}

// requireFleetDatabase fails (CI=true) or skips a test that needs PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is not set, and returns it.
func requireFleetDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv(envPostgresURL)
	if base != "" {
		return base
	}
	notrun.Skip(t, "the fleet end-to-end test needs PostgreSQL (SWITCHBOARD_TEST_DATABASE_URL): nodes share rows and the change feed through it; it did not run")
	return ""
}

// TestFleet runs three real `switchboard serve` processes on one fresh PostgreSQL
// database and a real redis-server, behind a round-robin proxy without stickiness, and
// drives them with the official TypeScript MCP client: changes made through one node
// reach every node's sessions as tools/list_changed (a GET stream on node C included)
// and every node lists the same tools after each; a revoked key and a deleted
// connection stop working on the other nodes; a confirmation is answered through
// another node than the one running the call; the nodes share the connection's rate
// limit and the upstream's Retry-After window, counted at the fake upstream; and a
// session continues on another node after its node is killed.
func TestFleet(t *testing.T) {
	t.Parallel()
	base := requireFleetDatabase(t)
	requireNode(t)
	redistest.Binary(t)
	ensureClientPackages(t)
	bin := buildServer(t)

	dbURL, _ := freshPostgres(t, base)
	rds := redistest.Start(t)
	gh := newFleetGitHub(t)
	proxyL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := "http://" + proxyL.Addr().String()
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL": dbURL,
		"SWITCHBOARD_REDIS_URL":    rds.URL,
		// On a loaded machine (CI runs many packages at once) a round trip can pass the
		// 250 ms default; a node would then decide on its own share, and the shared
		// bucket this test checks would not be what decided.
		"SWITCHBOARD_REDIS_TIMEOUT":   "5s",
		"SWITCHBOARD_KEY_FILE":        filepath.Join(t.TempDir(), "keys", "master.key"),
		"SWITCHBOARD_GITHUB_BASE_URL": gh.URL,
		"SWITCHBOARD_PUBLIC_URL":      proxyURL,
		"SWITCHBOARD_LOG_LEVEL":       "warn",
	}
	nodes := []*server{startServer(t, bin, env)}
	admin := nodes[0].AdminKey
	nodes = append(nodes, startServer(t, bin, env), startServer(t, bin, env))
	proxy := newRRProxy(t, proxyL, []string{nodes[0].BaseURL, nodes[1].BaseURL, nodes[2].BaseURL})
	api := func(n int) *apiClient { return &apiClient{Base: nodes[n].BaseURL, Key: admin} }
	const nodeA, nodeB, nodeC = 0, 1, 2

	connect := func(n int, token string) string {
		status, body := api(n).Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": token})
		var c struct {
			ID string `json:"id"`
		}
		if status != http.StatusCreated || json.Unmarshal(body, &c) != nil || c.ID == "" {
			t.Fatalf("connect github on node %d: status %d, body %s", n, status, body)
		}
		return c.ID
	}
	first := connect(nodeA, githubToken)

	cl := startFleetClient(t)
	for i, id := range []string{"a", "b", "c"} {
		cl.do("open", map[string]any{"id": id, "url": nodes[i].BaseURL + "/mcp/default", "key": admin}, nil)
	}
	cl.do("open", map[string]any{"id": "p", "url": proxyURL + "/mcp/default", "key": admin, "elicit": "accept"}, nil)
	if names := cl.sameTools("at start", "a", "b", "c", "p"); !slices.Contains(names, "github_get_issue") {
		t.Fatalf("the nodes list %v; want github_get_issue", names)
	}
	issueArgs := func(more map[string]any) map[string]any {
		args := map[string]any{"owner": githubOwner, "repo": githubRepo, "issue_number": githubIssueNum}
		for k, v := range more {
			args[k] = v
		}
		return args
	}

	// A second account added through node A: every session is told, the one whose GET
	// stream is on node C included, and every node lists the same tools, now with the
	// connection argument naming both accounts.
	before := map[string]int{}
	for _, id := range []string{"a", "b", "c", "p"} {
		before[id] = cl.changed(id)
	}
	connect(nodeA, githubBetaToken)
	for _, id := range []string{"c", "b", "a", "p"} {
		t.Logf("list_changed after a connection added on node A reached session %s in %s", id, cl.waitChanged(id, before[id], "a connection was added on node A"))
	}
	cl.sameTools("after a connection was added", "a", "b", "c", "p")
	prop, _ := cl.toolSchema("c", "github_get_issue")["properties"].(map[string]any)
	conn, _ := prop["connection"].(map[string]any)
	if labels, _ := conn["enum"].([]any); !slices.Contains(labels, any(githubLogin)) || !slices.Contains(labels, any(githubBetaLogin)) {
		t.Errorf("node C's github_get_issue connection argument is %v; want an enum of %s and %s", conn, githubLogin, githubBetaLogin)
	}

	// A key created on node B and used on node C stops working on node C once revoked
	// on node A, on its MCP session and its REST calls.
	status, body := api(nodeB).Do(t, http.MethodPost, "/api/keys", map[string]string{"name": "laptop"})
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	if status != http.StatusCreated || json.Unmarshal(body, &key) != nil || key.Key == "" {
		t.Fatalf("create a key on node B: status %d", status)
	}
	cl.do("open", map[string]any{"id": "k", "url": nodes[nodeC].BaseURL + "/mcp/default", "key": key.Key}, nil)
	if status, _ := (&apiClient{Base: nodes[nodeC].BaseURL, Key: key.Key}).Do(t, http.MethodGet, "/api/tenant", nil); status != http.StatusOK {
		t.Fatalf("the new key on node C: status %d", status)
	}
	if status, _ := api(nodeA).Do(t, http.MethodDelete, "/api/keys/"+key.ID, nil); status != http.StatusOK && status != http.StatusNoContent {
		t.Fatalf("revoke the key on node A: status %d", status)
	}
	// The bound is under the 30 s the nodes cache a key (cached on node C by the call
	// above), so only the change feed can make node C refuse it in time; it was 10 s,
	// which a loaded machine running three nodes and a Node.js client could exceed.
	revoked := time.Now()
	for {
		restStatus, _ := (&apiClient{Base: nodes[nodeC].BaseURL, Key: key.Key}).Do(t, http.MethodGet, "/api/tenant", nil)
		mcpErr := cl.try("tools", map[string]any{"id": "k"}, nil)
		if restStatus == http.StatusUnauthorized && mcpErr != nil {
			t.Logf("the key revoked on node A was refused on node C after %s", time.Since(revoked))
			break
		}
		if time.Since(revoked) > 25*time.Second {
			t.Fatalf("25 s after its revocation on node A, node C still takes the key: REST %d, MCP error %v", restStatus, mcpErr)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A confirmation answered through another node than the one running the call.
	if status, body := api(nodeB).Do(t, http.MethodPut, "/api/mcp-settings", map[string]string{"confirm": "destructive", "tool_mode": "all"}); status != http.StatusOK {
		t.Fatalf("PUT /api/mcp-settings on node B: status %d, body %s", status, body)
	}
	proxy.mu.Lock()
	proxy.answerAway = true
	proxy.mu.Unlock()
	sinceConfirm := time.Now()
	res := cl.call("p", "github_update_issue", issueArgs(map[string]any{"state": "closed", "connection": githubLogin}))
	proxy.mu.Lock()
	proxy.answerAway = false
	proxy.mu.Unlock()
	var elicited struct{ Elicited []string }
	cl.do("elicited", map[string]any{"id": "p"}, &elicited)
	if res.IsError || res.Structured["state"] != "closed" || len(elicited.Elicited) != 1 {
		t.Errorf("github_update_issue with a confirmation: %+v, asked %d times; want the closed issue after one question", res, len(elicited.Elicited))
	}
	if got := gh.requests(http.MethodPatch, fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum), githubToken, sinceConfirm); len(got) != 1 {
		t.Errorf("the fake GitHub received %d PATCHes of the issue after the confirmation, want 1", len(got))
	}
	callNode, answerNode := -1, -1
	for _, p := range proxy.served() {
		switch p.Kind {
		case "tools/call":
			callNode = p.Backend
		case "response":
			answerNode = p.Backend
		}
	}
	if callNode < 0 || answerNode < 0 || callNode == answerNode {
		t.Errorf("the call went to node %d and the person's answer to node %d; the test wants them on two nodes", callNode, answerNode)
	}
	if status, _ := api(nodeB).Do(t, http.MethodPut, "/api/mcp-settings", map[string]string{"confirm": "never", "tool_mode": "all"}); status != http.StatusOK {
		t.Fatalf("PUT /api/mcp-settings: status %d", status)
	}

	// The connection's rate limit (GitHub's: 10 a second, a burst of 50) holds for the
	// three nodes together: 120 calls through the proxy reach the upstream no faster
	// than the limit allows over the time they took (within 10%). Each node with a
	// bucket of its own would let them all through at once.
	issuePath := fmt.Sprintf("/repos/%s/%s/issues/%d", githubOwner, githubRepo, githubIssueNum)
	sinceBurst := time.Now()
	var many struct{ Results []toolResult }
	cl.do("callMany", map[string]any{"id": "p", "tool": "github_get_issue", "args": issueArgs(map[string]any{"connection": githubBetaLogin}), "n": 120}, &many)
	arrived := gh.requests(http.MethodGet, issuePath, githubBetaToken, sinceBurst)
	if len(arrived) == 0 {
		t.Fatalf("no call reached the upstream: %+v", many.Results[:1])
	}
	span := arrived[len(arrived)-1].At.Sub(arrived[0].At).Seconds()
	allowed := 1.1 * (50 + 10*span)
	ok := 0
	for _, r := range many.Results {
		if !r.IsError {
			ok++
		}
	}
	t.Logf("120 calls on three nodes: %d reached the upstream over %.1f s (the limit allows %.0f), %d succeeded", len(arrived), span, allowed/1.1, ok)
	if float64(len(arrived)) > allowed {
		t.Errorf("the upstream received %d requests in %.1f s; the connection's limit (burst 50, 10/s) allows %.0f, plus 10%%", len(arrived), span, allowed/1.1)
	}

	// The upstream's Retry-After, answered to one node, holds the others: after the 429,
	// calls through every node are refused without reaching it.
	gh.limit(true)
	sinceLimit := time.Now()
	if r := cl.call("p", "github_get_issue", issueArgs(map[string]any{"connection": githubLogin})); !r.IsError {
		t.Errorf("github_get_issue answered 429 by the upstream: %+v, want a tool error", r)
	}
	cl.do("callMany", map[string]any{"id": "p", "tool": "github_get_issue", "args": issueArgs(map[string]any{"connection": githubLogin}), "n": 6}, &many)
	for _, r := range many.Results {
		if !r.IsError || !strings.Contains(strings.ToLower(r.Text), "rate limit") {
			t.Errorf("a call during the upstream's Retry-After window: %+v; want a rate-limit error", r)
		}
	}
	if got := gh.requests(http.MethodGet, issuePath, githubToken, sinceLimit); len(got) != 1 {
		t.Errorf("the upstream received %d requests after its Retry-After: 60, want 1 (the one it refused)", len(got))
	}
	gh.limit(false)

	// The first account deleted through node C: the sessions on every node are told,
	// every node lists the same tools (no connection argument any more), and node A
	// refuses the deleted account without sending its token upstream.
	for _, id := range []string{"a", "b", "c", "p"} {
		before[id] = cl.changed(id)
	}
	if status, _ := api(nodeC).Do(t, http.MethodDelete, "/api/connections/"+first, nil); status != http.StatusOK && status != http.StatusNoContent {
		t.Fatalf("delete the connection on node C: status %d", status)
	}
	deleted := time.Now()
	for _, id := range []string{"a", "b", "c", "p"} {
		t.Logf("list_changed after a connection deleted on node C reached session %s in %s", id, cl.waitChanged(id, before[id], "a connection was deleted on node C"))
	}
	cl.sameTools("after a connection was deleted", "a", "b", "c", "p")
	if _, has := cl.toolSchema("a", "github_get_issue")["properties"].(map[string]any)["connection"]; has {
		t.Error("node A's github_get_issue still takes a connection argument with one account left")
	}
	if r := cl.call("a", "github_get_issue", issueArgs(map[string]any{"connection": githubLogin})); !r.IsError {
		t.Errorf("node A ran github_get_issue on the account deleted on node C: %+v", r)
	}
	if got := gh.requests(http.MethodGet, issuePath, githubToken, deleted); len(got) != 0 {
		t.Errorf("the deleted connection's token reached the upstream %d times after its deletion", len(got))
	}

	// A session continues on another node after the node serving it is killed.
	var sess struct{ Session string }
	cl.do("session", map[string]any{"id": "p"}, &sess)
	if r := cl.call("p", "github_get_issue", issueArgs(nil)); r.IsError {
		t.Fatalf("github_get_issue through the proxy: %+v", r)
	}
	victim := -1
	for _, p := range proxy.served() {
		if p.Kind == "tools/call" {
			victim = p.Backend
		}
	}
	nodes[victim].Kill()
	for i := range 3 {
		if r := cl.call("p", "github_get_issue", issueArgs(nil)); r.IsError || r.Structured["number"] != float64(githubIssueNum) {
			t.Errorf("call %d after node %d was killed: %+v", i, victim, r)
		}
	}
	var after struct{ Session string }
	cl.do("session", map[string]any{"id": "p"}, &after)
	if after.Session == "" || after.Session != sess.Session {
		t.Errorf("the session id changed from %q to %q: the session did not continue", sess.Session, after.Session)
	}
}
