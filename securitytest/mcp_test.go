package securitytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// mcpCall is one MCP method, with params that name the victim's objects where the
// method takes an id.
type mcpCall struct {
	method string
	params func(f *fixture) string
	notify bool // a notification: no id, no answer
}

func params(s string) func(*fixture) string { return func(*fixture) string { return s } }

// mcpCalls is every MCP method a client sends a server.
var mcpCalls = []mcpCall{
	{method: "initialize", params: params(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}`)},
	{method: "ping", params: params(`{}`)},
	{method: "tools/list", params: params(`{}`)},
	{method: "tools/call", params: func(f *fixture) string {
		return `{"name":"github_get_me","arguments":{"connection":"` + f.connID + `"}}`
	}},
	{method: "resources/list", params: params(`{}`)},
	{method: "resources/templates/list", params: params(`{}`)},
	{method: "resources/read", params: func(f *fixture) string { return `{"uri":"switchboard://runs/` + f.runID + `"}` }},
	{method: "resources/subscribe", params: func(f *fixture) string { return `{"uri":"switchboard://runs/` + f.runID + `"}` }},
	{method: "resources/unsubscribe", params: func(f *fixture) string { return `{"uri":"switchboard://runs/` + f.runID + `"}` }},
	{method: "resources/read", params: func(f *fixture) string { return `{"uri":"switchboard://flows/` + f.wfRunID + `"}` }},
	{method: "resources/subscribe", params: func(f *fixture) string { return `{"uri":"switchboard://flows/` + f.wfRunID + `"}` }},
	{method: "prompts/list", params: params(`{}`)},
	{method: "prompts/get", params: params(`{"name":"instructions"}`)},
	{method: "completion/complete", params: func(f *fixture) string {
		return `{"ref":{"type":"ref/resource","uri":"switchboard://runs/{run_id}"},"argument":{"name":"run_id","value":"` + f.runID[:6] + `"}}`
	}},
	{method: "logging/setLevel", params: params(`{"level":"debug"}`)},
	{method: "tasks/get", params: func(f *fixture) string { return `{"taskId":"` + f.runID + `"}` }},
	{method: "tasks/list", params: params(`{}`)},
	{method: "tasks/result", params: func(f *fixture) string { return `{"taskId":"` + f.runID + `"}` }},
	{method: "tasks/cancel", params: func(f *fixture) string { return `{"taskId":"` + f.runID + `"}` }},
	{method: "server/discover", params: params(`{}`)},
	{method: "subscriptions/listen", params: params(`{}`)},
	{method: "notifications/initialized", params: params(`{}`), notify: true},
	{method: "notifications/cancelled", params: params(`{"requestId":1}`), notify: true},
}

func (c mcpCall) body(f *fixture, id int) string {
	if c.notify {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, c.method, c.params(f))
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, c.method, c.params(f))
}

// mcpPost sends a JSON-RPC body to an MCP path and returns the status and the
// JSON-RPC message (the last SSE event's data when the answer is a stream).
func (h *hub) mcpPost(key, path, session, body string) (int, http.Header, []byte) {
	h.t.Helper()
	header := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}
	if session != "" {
		header["Mcp-Session-Id"] = session
	}
	status, hdr, b := h.do(key, http.MethodPost, path, body, header)
	if strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				b = []byte(data)
			}
		}
	}
	return status, hdr, b
}

// session initializes a session with key at path and returns its id.
func (h *hub) session(key, path string) string {
	h.t.Helper()
	status, hdr, b := h.mcpPost(key, path, "", mcpCalls[0].body(nil, 0))
	id := hdr.Get("Mcp-Session-Id")
	if status != http.StatusOK || id == "" {
		h.t.Fatalf("initialize at %s: %d %s", path, status, b)
	}
	h.mcpPost(key, path, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// rpcRefused reports whether a JSON-RPC answer refused: an error, or a tool result
// marked isError.
func rpcRefused(b []byte) bool {
	var msg struct {
		Error  *json.RawMessage `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &msg) != nil {
		return false
	}
	return msg.Error != nil || (msg.Result != nil && msg.Result.IsError)
}

// TestMCPForeignPrincipals runs every MCP method at the victim tenant's URL and at its
// agent's URL with every kind of foreign principal, with and without the victim's
// session id: a key that does not authenticate gets 401, a key of another tenant or
// of an agent 403, and another user of the tenant (whose own URL the tenant URL is)
// is refused every victim id it names; no answer is a 5xx or holds the victim's data,
// and the victim's GitHub token is never used.
func TestMCPForeignPrincipals(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		mcpForeignPrincipals(t, newHub(t, db))
	})
}

func mcpForeignPrincipals(t *testing.T, h *hub) {
	f := h.seed()
	tenantURL := "/mcp/" + f.victimSlug
	agentURL := tenantURL + "/agents/" + f.agentID
	victimSession := h.session(f.owner, tenantURL)
	memberSession := h.session(f.principals[otherUser], tenantURL)
	upstreamBefore := h.github.victimRequests()

	for _, endpoint := range []string{tenantURL, agentURL} {
		for _, kind := range principalKinds {
			key := f.principals[kind]
			wantStatus := http.StatusForbidden
			switch {
			case kind == anonymous || kind == revoked || kind == removed:
				wantStatus = http.StatusUnauthorized
			case kind == otherUser && endpoint == tenantURL:
				wantStatus = 0 // the member's own URL: checked per victim id below
			}
			for i, c := range mcpCalls {
				for _, session := range []string{"", victimSession} {
					where := fmt.Sprintf("%s at %s as %s (session %t)", c.method, endpoint, kind, session != "")
					status, hdr, b := h.mcpPost(key, endpoint, session, c.body(f, i+1))
					if status >= 500 {
						t.Errorf("%s: status %d: %s", where, status, b)
					}
					if m := f.leaked(kind, b, endpoint+c.body(f, i+1)); m != "" {
						t.Errorf("%s: the answer holds the victim's %q: %s", where, m, b)
					}
					if wantStatus != 0 && status != wantStatus {
						t.Errorf("%s: status %d, want %d: %s", where, status, wantStatus, b)
					}
					if wantStatus == 0 && session == victimSession && c.method == "initialize" {
						// initialize starts a session of its own, never joins the victim's.
						if got := hdr.Get("Mcp-Session-Id"); status == http.StatusOK && (got == "" || got == victimSession) {
							t.Errorf("%s: initialize answered session %q", where, got)
						}
						continue
					}
					if wantStatus == 0 && session == victimSession && status != http.StatusNotFound {
						t.Errorf("%s: another user's session answered %d, want 404: %s", where, status, b)
					}
				}
			}
			// The stream and the session's end, with the victim's session.
			for _, method := range []string{http.MethodGet, http.MethodDelete} {
				status, _, b := h.do(key, method, endpoint, "", map[string]string{"Mcp-Session-Id": victimSession, "Accept": "text/event-stream", "Mcp-Protocol-Version": "2025-06-18"})
				where := fmt.Sprintf("%s %s as %s with the victim's session", method, endpoint, kind)
				if status < 400 || status >= 500 {
					t.Errorf("%s: status %d, want a refusal: %s", where, status, b)
				}
			}
		}
	}

	// The member at their own tenant URL, in their own session, naming the victim's ids.
	for i, c := range mcpCalls {
		if c.notify || c.method == "initialize" || !strings.Contains(c.params(f), f.runID) && !strings.Contains(c.params(f), f.wfRunID) && !strings.Contains(c.params(f), f.connID) && !strings.Contains(c.params(f), f.runID[:6]) {
			continue
		}
		status, _, b := h.mcpPost(f.principals[otherUser], tenantURL, memberSession, c.body(f, 100+i))
		where := c.method + " naming the victim's ids, as " + otherUser
		if status >= 500 {
			t.Errorf("%s: status %d: %s", where, status, b)
		}
		if m := f.leaked(otherUser, b, c.body(f, 100+i)); m != "" {
			t.Errorf("%s: the answer holds the victim's %q: %s", where, m, b)
		}
		if status == http.StatusOK && !rpcRefused(b) && c.method != "completion/complete" && c.method != "resources/unsubscribe" {
			t.Errorf("%s: not refused: %s", where, b)
		}
	}

	// The victim's session still works.
	if status, _, b := h.mcpPost(f.owner, tenantURL, victimSession, `{"jsonrpc":"2.0","id":999,"method":"ping","params":{}}`); status != http.StatusOK || rpcRefused(b) {
		t.Errorf("the victim's session after the probes: %d %s", status, b)
	}
	if got := h.github.victimRequests(); got != upstreamBefore {
		t.Errorf("foreign principals made %d upstream requests with the victim's token", got-upstreamBefore)
	}
}
