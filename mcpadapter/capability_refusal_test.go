package mcpadapter

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// On 2026-07-28 a call whose tool asks the client for sampling, which the request's
// clientCapabilities do not declare, and fails for it, is refused with
// MissingRequiredClientCapabilityError: -32021, HTTP 400, the request's id, and
// data.requiredCapabilities naming sampling as a ClientCapabilities object; whether
// the client reads SSE or JSON.
func TestUndeclaredCapabilityRefusesTheCall(t *testing.T) {
	t.Parallel()
	e := newAskerEnv(t)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": map[string]any{
		"name": "asker_sample", "arguments": map[string]any{},
		"_meta": map[string]any{mcp.MetaKeyProtocolVersion: mcp.ProtocolVersion20260728, mcp.MetaKeyClientCapabilities: map[string]any{}},
	}})
	for _, accept := range []string{"application/json, text/event-stream", "application/json"} {
		t.Run(accept, func(t *testing.T) {
			status, raw := rawPost(t, e, string(body), map[string]string{"Accept": accept,
				mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "asker_sample"})
			var msg struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code int `json:"code"`
					Data struct {
						RequiredCapabilities map[string]json.RawMessage `json:"requiredCapabilities"`
					} `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(raw), &msg); err != nil {
				t.Fatalf("answer %q: %v", raw, err)
			}
			if status != http.StatusBadRequest || msg.Error.Code != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY || string(msg.ID) != "41" {
				t.Fatalf("answer HTTP %d %s, want 400 with error -32021 for id 41", status, raw)
			}
			if s := string(msg.Error.Data.RequiredCapabilities["sampling"]); s != "{}" {
				t.Errorf("data.requiredCapabilities = %s, want {\"sampling\":{}}", raw)
			}
		})
	}
}
