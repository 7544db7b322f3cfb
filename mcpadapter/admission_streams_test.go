package mcpadapter

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/router"
)

// openListen opens a subscriptions/listen stream (protocol 2026-07-28) at the tenant
// URL and returns it once its first event, the acknowledgement, has arrived.
func openListen(t *testing.T, e *env, id int) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": string(mcp.MethodSubscriptionsListen), "params": map[string]any{
		"notifications": map[string]any{"toolsListChanged": true},
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "listener", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		},
	}})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, string(mcp.MethodSubscriptionsListen))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("subscriptions/listen = %d", resp.StatusCode)
	}
	events := bufio.NewReader(resp.Body)
	line, err := events.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data:") {
		line, err = events.ReadString('\n')
	}
	if err != nil || !strings.Contains(line, "notifications/subscriptions/acknowledged") {
		resp.Body.Close()
		t.Fatalf("subscriptions/listen's first event = %q (%v); want the acknowledgement", line, err)
	}
	return resp
}

// Streams a client keeps open, or opens and abandons, hold no place in the admission:
// they wait for notifications, which is no work of the hub's. With two places
// node-wide, ten subscriptions/listen streams left open and ten abandoned, no place
// is taken and a tools/call is still admitted and answered.
func TestListenStreamsHoldNoPlace(t *testing.T) {
	t.Parallel()
	adm := limits.NewAdmission(limits.AdmissionOptions{MaxInFlight: 2, MaxWait: 100 * time.Millisecond})
	e := newEnvWith(t, func(o *Options) { o.Admission = adm }, func(o *router.Options) { o.Admission = adm })
	for i := range 10 {
		open := openListen(t, e, 100+i)
		t.Cleanup(func() { open.Body.Close() })
		openListen(t, e, 200+i).Body.Close() // abandoned
	}
	if n := adm.Running(); n != 0 {
		t.Errorf("with only listen streams open, %d admission places are held; want none", n)
	}
	msg := modernPost(t, e, "tools/call", map[string]any{"name": "notes_create_note", "arguments": map[string]any{"text": "still admitted"}})
	res, _ := msg["result"].(map[string]any)
	if res == nil || res["isError"] == true || !strings.Contains(toJSON(msg), "still admitted") {
		t.Fatalf("tools/call beside the listen streams = %v; want the note", msg)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A request refused at the door of an MCP URL gets a JSON-RPC answer, as an MCP client
// reads it, with the refusal's status and Retry-After: a request other than tools/call
// an error under its own id, a message whose id cannot be read an error with a null id;
// each says in data when to retry.
func TestRefusalIsJSONRPC(t *testing.T) {
	t.Parallel()
	e, adm, _ := admissionEnv(t)
	fillTenant(t, adm, alice.TenantID)
	for _, c := range []struct {
		name, body, wantID string
	}{
		{"tools/list", `{"jsonrpc":"2.0","id":"list-7","method":"tools/list"}`, `"list-7"`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "null"},
		{"not JSON", `{"jsonrpc":`, "null"},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer key-alice")
		req.Header.Set("Mcp-Session-Id", "mcs_whatever")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct {
					RetryAfter int `json:"retry_after_seconds"`
				} `json:"data"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&msg)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: refusal = %d with Retry-After %q; want 429 with Retry-After 1", c.name, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if err != nil || msg.JSONRPC != "2.0" || string(msg.ID) != c.wantID || msg.Error == nil || msg.Error.Code != mcp.INTERNAL_ERROR ||
			!strings.Contains(msg.Error.Message, "retry in 1 s") || msg.Error.Data.RetryAfter != 1 {
			t.Errorf("%s: refusal body = %+v (%v); want a JSON-RPC error under id %s saying when to retry", c.name, msg, err, c.wantID)
		}
	}
}
