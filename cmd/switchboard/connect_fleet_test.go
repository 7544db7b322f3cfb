package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testproxy"
)

// switchProxy is the load balancer in front of a fleet: every request goes to the node
// it points at now.
type switchProxy struct {
	mu   sync.Mutex
	node http.Handler
}

func (p *switchProxy) to(base string) {
	u, _ := url.Parse(base)
	p.mu.Lock()
	p.node = testproxy.New(u, nil)
	p.mu.Unlock()
}

func (p *switchProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	node := p.node
	p.mu.Unlock()
	node.ServeHTTP(w, r)
}

// rawMCP is a client of the 2025-11-25 streamable HTTP transport written by hand, so a
// test controls what it accepts: one that takes no server request during a call sends
// Accept: application/json only.
type rawMCP struct {
	t       *testing.T
	base    string
	key     string
	session string
}

// post sends one JSON-RPC message and returns the JSON-RPC answer (from a JSON body or
// the last message of an SSE stream) and every message the stream carried.
func (c *rawMCP) post(accept, body string) (map[string]any, []map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+"/mcp/default", strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", body, err)
	}
	defer res.Body.Close()
	if s := res.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if res.StatusCode == http.StatusAccepted {
		return nil, nil
	}
	var msgs []map[string]any
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.TrimSpace(data) != "" {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err == nil {
					msgs = append(msgs, m)
				}
			}
		}
	} else {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(res.Body)
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			c.t.Fatalf("POST %s: %d %s", body, res.StatusCode, buf.String())
		}
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		if _, ok := m["method"]; !ok {
			return m, msgs
		}
	}
	c.t.Fatalf("POST %s: no answer among %v", body, msgs)
	return nil, nil
}

// initialize opens a session declaring URL-mode elicitation.
func (c *rawMCP) initialize() {
	c.t.Helper()
	c.post("application/json, text/event-stream", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if c.session == "" {
		c.t.Fatal("initialize gave no session")
	}
	c.post("application/json, text/event-stream", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestConnectFromConversationAcrossNodes: a client that cannot take a request from the
// server during a call (it accepts only a JSON answer) calls gmail_send_message with
// nothing connected on node A and gets -32042 with the connect link; the person opens
// it through the load balancer, which sends the browser, and the provider's redirect
// back, to node B; the client's retry on node B runs on the new connection.
func TestConnectFromConversationAcrossNodes(t *testing.T) {
	t.Parallel()
	testdb.Postgres(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		lb := &switchProxy{}
		front := httptest.NewServer(lb)
		t.Cleanup(front.Close)
		public := front.URL
		gmail, dir := startGmail(t, public)
		dsn, keyFile := testdb.DSN(t, db), filepath.Join(t.TempDir(), "master.key")
		start := func(lines int) (node, []string) {
			e := env(map[string]string{
				"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"), "SWITCHBOARD_PUBLIC_URL": public,
				"SWITCHBOARD_DATABASE_URL": dsn, "SWITCHBOARD_KEY_FILE": keyFile, "SWITCHBOARD_OPENAPI_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error",
			})
			out, _ := startServe(t, e, lines)
			base, ok := strings.CutPrefix(out[0], "Switchboard is listening on ")
			if !ok {
				t.Fatalf("first line %q", out[0])
			}
			return node{base: base}, out
		}
		a, out := start(6)
		lb.to(a.base)
		admin, person := gmailTenant(t, a, out, `{"confirm":"never","tool_mode":"all","catalog":"all"}`)
		b, _ := start(1)

		// On node A: the call cannot wait for the person, so it answers -32042.
		onA := &rawMCP{t: t, base: a.base, key: admin}
		onA.initialize()
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gmail_send_message","arguments":{"userId":"me","body":{"raw":"SGVsbG8"}}}}`
		answer, _ := onA.post("application/json", call)
		e, _ := answer["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32042) {
			t.Fatalf("the call on node A answered %v, want error -32042", answer)
		}
		data, _ := e["data"].(map[string]any)
		els, _ := data["elicitations"].([]any)
		if len(els) != 1 {
			t.Fatalf("-32042 without one elicitation: %v", e)
		}
		el, _ := els[0].(map[string]any)
		link, _ := el["url"].(string)
		if el["mode"] != "url" || el["elicitationId"] == "" || !strings.HasPrefix(link, public+"/connect/") {
			t.Fatalf("the elicitation of -32042: %v", el)
		}
		gmail.Mu.Lock()
		if len(gmail.Sent) != 0 {
			t.Errorf("Gmail received %q before the account was connected", gmail.Sent)
		}
		gmail.Mu.Unlock()

		// The person connects through the load balancer, now sending everything to B.
		lb.to(b.base)
		if _, status, page := person.connect(link); status != http.StatusOK || !strings.Contains(page, "connected") {
			t.Fatalf("the provider's redirect back to node B: %d %s", status, page)
		}

		// The client retries on node B, which runs the call on the new connection.
		onB := &rawMCP{t: t, base: b.base, key: admin}
		onB.initialize()
		answer, _ = onB.post("application/json, text/event-stream", call)
		result, _ := answer["result"].(map[string]any)
		if result == nil || result["isError"] == true {
			t.Fatalf("the retry on node B: %v", answer)
		}
		gmail.Mu.Lock()
		defer gmail.Mu.Unlock()
		if len(gmail.Sent) != 1 || gmail.Sent[0] != "SGVsbG8" {
			t.Errorf("Gmail received %q, want the one message of the retry", gmail.Sent)
		}
	})
}
