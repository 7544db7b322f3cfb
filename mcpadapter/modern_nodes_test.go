package mcpadapter

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// modernRequestAt posts a raw message of protocol 2026-07-28 (no session) to a full URL.
func modernRequestAt(t *testing.T, u, key, method, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, method)
	if method == string(mcp.MethodToolsCall) {
		var msg struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(body), &msg)
		req.Header.Set(mcp.HeaderName, msg.Params.Name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s: %v", method, err)
		return 0, ""
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// A stateless (2026-07-28) call running on node A is canceled by notifications/cancelled
// posted to node B: the request has no session, so the cancellation travels to every
// node as the caller's, and the node running the call stops it (the upstream request
// ends, and no result is sent).
func TestModernCancellationReachesTheNodeRunningTheCall(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		t.Cleanup(e.up.Release)
		a, b, _ := twoNodes(t, e, db)
		path := "/mcp/" + e.ann.TenantSlug
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		done := make(chan string, 1)
		go func() {
			_, body := modernRequestAt(t, a.URL+path, keyAnn, "tools/call",
				`{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"notes_wait","arguments":{},`+meta+`}}`)
			done <- body
		}()
		testwait.Recv(t, e.up.Waiting(), "the call to reach the upstream") // the call runs on A, held by the upstream
		status, body := modernRequestAt(t, b.URL+path, keyAnn, "notifications/cancelled",
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-7","reason":"the user stopped it"}}`)
		if status != http.StatusAccepted {
			t.Fatalf("cancel on B: %d %s", status, body)
		}
		got := testwait.Recv(t, done, "the call on node A to end, cancelled by notifications/cancelled posted to node B")
		if strings.Contains(got, `"waited"`) || strings.Contains(got, `"result"`) {
			t.Errorf("the call ran to its end or answered after its cancellation: %s", got)
		}
	})
}
