package securitytest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestUnaskedConfirmationRunsNothing: on protocol 2026-07-28 a tools/call that brings
// an accept of the hub's confirmation on its first try (no question was asked, so it
// has no requestState), or with a requestState the hub did not sign, runs nothing: the
// hub asks instead, and GitHub gets no request with the owner's token. The answer to
// the hub's own question, with its requestState, runs the call once.
func TestUnaskedConfirmationRunsNothing(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	f := h.seed()
	h.want(f.owner, http.MethodPut, "/api/mcp-settings", `{"confirm":"always","approval":"relay","tool_mode":"all"}`, http.StatusOK, nil)
	accept := map[string]any{"switchboard_confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	call := func(responses map[string]any, state string) (resultType, requestState string, isError bool) {
		t.Helper()
		params := map[string]any{"name": "github_get_me", "arguments": map[string]any{}, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "probe", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		}}
		if responses != nil {
			params["inputResponses"] = responses
		}
		if state != "" {
			params["requestState"] = state
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		status, _, b := h.do(f.owner, http.MethodPost, "/mcp/"+f.victimSlug, string(body), map[string]string{
			"Accept": "application/json, text/event-stream", mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728,
			mcp.HeaderMethod: "tools/call", mcp.HeaderName: "github_get_me"})
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			var msg struct {
				Result *struct {
					ResultType   string `json:"resultType"`
					RequestState string `json:"requestState"`
					IsError      bool   `json:"isError"`
				} `json:"result"`
			}
			if json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "data:")), &msg) == nil && msg.Result != nil {
				return msg.Result.ResultType, msg.Result.RequestState, msg.Result.IsError
			}
		}
		t.Fatalf("tools/call answered %d %s, without a result", status, b)
		return "", "", false
	}
	before := h.github.victimRequests()
	kind, state, _ := call(accept, "")
	if kind != string(mcp.ResultTypeInputRequired) || state == "" {
		t.Fatalf("a first-try accept answered %q (requestState %q), want the hub's question", kind, state)
	}
	if _, _, isError := call(accept, "v1.9999999999.AAAA"); !isError && h.github.victimRequests() != before {
		t.Fatal("an accept with a forged requestState ran the call")
	}
	if got := h.github.victimRequests(); got != before {
		t.Fatalf("GitHub got %d requests with the owner's token before the question was answered", got-before)
	}
	if kind, _, isError := call(accept, state); kind == string(mcp.ResultTypeInputRequired) || isError {
		t.Fatalf("the answer to the hub's question: %q, isError %v; want the call run", kind, isError)
	}
	if got := h.github.victimRequests(); got != before+1 {
		t.Fatalf("GitHub got %d requests with the owner's token after the answer, want 1", got-before)
	}
}
