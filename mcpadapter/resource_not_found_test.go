package mcpadapter

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A resources/read of a URI the scope has no resource for names the URI in the
// error's data.uri (SEP-2164), with the code of the request's era: -32602 and HTTP 400
// on 2026-07-28, -32002 before it. That holds for a URI no resource or template
// matches (which mcp-go refuses), one a template of the hub's matches but that does
// not exist (a connection of no one's, which its handler refuses), and one of a remote
// server the scope does not list.
func TestResourceNotFoundNamesTheURI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uris := []string{"test://nonexistent-resource", connectionsURI + "/con_nobody", "switchboard://mcp/nosuch/docs://x"}
	for _, uri := range uris {
		params := map[string]any{"uri": uri, "_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "modern", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{}}}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": params})
		status, raw := rawPost(t, e, string(body), map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728,
			mcp.HeaderMethod: "resources/read", mcp.HeaderName: uri})
		var msg struct {
			ID    int `json:"id"`
			Error struct {
				Code int `json:"code"`
				Data struct {
					URI string `json:"uri"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(raw), &msg); err != nil {
			t.Fatalf("%s: %s: %v", uri, raw, err)
		}
		if status != http.StatusBadRequest || msg.ID != 1 || msg.Error.Code != mcp.INVALID_PARAMS || msg.Error.Data.URI != uri {
			t.Errorf("2026-07-28 %s: %d %s, want 400, -32602 and data.uri", uri, status, raw)
		}
	}

	session := sessionOf(t, e)
	for _, uri := range uris {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": map[string]any{"uri": uri}})
		status, raw := rawPost(t, e, string(body), map[string]string{"Mcp-Session-Id": session, mcp.HeaderProtocolVersion: mcp.ProtocolVersion20251125})
		var msg struct {
			Error struct {
				Code int `json:"code"`
				Data struct {
					URI string `json:"uri"`
				} `json:"data"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(raw), "data: ")), &msg)
		if status != http.StatusOK || msg.Error.Code != mcp.RESOURCE_NOT_FOUND || msg.Error.Data.URI != uri {
			t.Errorf("2025-11-25 %s: %d %s, want -32002 and data.uri", uri, status, raw)
		}
	}
}

// sessionOf opens a session of protocol 2025-11-25 as key-alice and returns its id.
func sessionOf(t *testing.T, e *env) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer key-alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize: %d, no session", resp.StatusCode)
	}
	rawPost(t, e, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": id, mcp.HeaderProtocolVersion: mcp.ProtocolVersion20251125})
	return id
}
