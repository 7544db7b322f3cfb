package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// consoleMeta is the _meta of a stateless MCP request from a client that shows forms.
var consoleMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "console", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
}

// mcpMessage is a JSON-RPC request of MCP 2026-07-28 with the params given (and _meta).
func mcpMessage(t *testing.T, method string, params map[string]any) string {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = consoleMeta
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mcpResult is a JSON-RPC answer's result, from a JSON body or an event stream's data.
func mcpResult(t *testing.T, body []byte) map[string]any {
	t.Helper()
	for _, line := range append([]string{string(body)}, strings.Split(string(body), "\n")...) {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data:")
		var msg struct {
			Result map[string]any `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
			return msg.Result
		}
	}
	t.Fatalf("no JSON-RPC result in %s", body)
	return nil
}

// mcpDo posts an MCP message with the headers MCP 2026-07-28 asks for, as who with
// who's key at path (the agent's URL with its key, or the console with a person's),
// and returns the status and body; a console answer is checked against the REST
// reference.
func (w *world) mcpDo(who actor, path, method, body string) (int, []byte) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.srv.URL+path, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+who.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	var named struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(body), &named) == nil && named.Params.Name != "" {
		req.Header.Set("Mcp-Name", named.Params.Name)
	}
	res, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if strings.HasPrefix(path, "/api/") {
		checkExchange(w.t, http.MethodPost, req.URL.Path, []byte(body), res, b)
	}
	return res.StatusCode, b
}

// TestAgentConsole: the agent's creator (and an admin) use the agent's MCP URL through
// POST /api/agents/{id}/mcp with their own key: the same tools/list as the agent's key
// gets at the agent URL, and calls run as the agent's (under its confirm policy: the
// form first, the call once accepted, an audit row naming the agent). Another member,
// another tenant and the agent's own key are refused, and nothing runs for them.
func TestAgentConsole(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		// The member's own, unshared account: the agent's keys the member makes run on it.
		conn := w.connect(w.member, goodToken, false)
		var a agentBody
		w.want(w.member, http.MethodPost, "/api/agents", agentJSON(t, map[string]any{"name": "console", "confirm": "always",
			"tools": toolList([][2]string{{"github_get_issue", conn}, {"github_create_issue", conn}})}), http.StatusCreated, &a)
		key := w.agentKey(w.member, a.ID)
		path := "/api/agents/" + a.ID + "/mcp"

		_, b := w.mcpDo(key, "/mcp/"+w.a.Slug+"/agents/"+a.ID, "tools/list", mcpMessage(t, "tools/list", nil))
		atURL := mcpResult(t, b)
		_, b = w.mcpDo(w.member, path, "tools/list", mcpMessage(t, "tools/list", nil))
		inConsole := mcpResult(t, b)
		if diff := cmp.Diff(atURL["tools"], inConsole["tools"]); diff != "" {
			t.Errorf("the console's tools differ from the agent URL's (-url +console):\n%s", diff)
		}
		var names []string
		for _, tool := range inConsole["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		if !slices.Contains(names, "github_get_issue") || !slices.Contains(names, "github_create_issue") {
			t.Errorf("the console lists %q", names)
		}

		call := func(who actor, responses map[string]any, state string) (int, []byte) {
			params := map[string]any{"name": "github_get_issue", "arguments": map[string]any{"owner": "octo-org", "repo": "hello", "issue_number": 7}}
			if responses != nil {
				params["inputResponses"] = responses
				params["requestState"] = state
			}
			return w.mcpDo(who, path, "tools/call", mcpMessage(t, "tools/call", params))
		}
		stranger := w.newUser(w.a.ID, "stranger@a.test", switchboard.RoleMember)
		for name, who := range map[string]actor{"another member": stranger, "another tenant": w.ownerB, "the agent's key": key} {
			if status, b := call(who, nil, ""); status != http.StatusForbidden && status != http.StatusNotFound {
				t.Errorf("%s: %d %s, want a refusal", name, status, b)
			}
		}
		status, b := call(w.member, nil, "")
		asked := mcpResult(t, b)
		state, _ := asked["requestState"].(string)
		if status != http.StatusOK || asked["resultType"] != "input_required" || state == "" || w.githubCalls(goodToken) != 0 {
			t.Fatalf("a call under confirm always: %d %s (GitHub called %d times); want the form, nothing run", status, b, w.githubCalls(goodToken))
		}
		accept := map[string]any{"switchboard_confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
		// The question was the member's: the admin's answer runs nothing (the admin does
		// not even see the tool, which runs on the member's private account).
		_, b = call(w.admin, accept, state)
		if !strings.Contains(string(b), `"error"`) && !strings.Contains(string(b), `"isError":true`) || w.githubCalls(goodToken) != 0 {
			t.Fatalf("an admin answering the member's question: %s, GitHub called %d times", b, w.githubCalls(goodToken))
		}
		_, b = call(w.member, accept, state)
		done := mcpResult(t, b)
		if done["isError"] == true || w.githubCalls(goodToken) != 1 {
			t.Fatalf("the accepted call: %s, GitHub called %d times", b, w.githubCalls(goodToken))
		}
		if sc, _ := done["structuredContent"].(map[string]any); sc == nil || sc["title"] != "Try it works" {
			t.Errorf("structuredContent = %v", done["structuredContent"])
		}
		// An admin manages the agent but does not act through the member's private
		// account: the admin's console lists what a key the admin made would.
		_, b = w.mcpDo(w.admin, path, "tools/list", mcpMessage(t, "tools/list", nil))
		for _, tool := range mcpResult(t, b)["tools"].([]any) {
			if name := tool.(map[string]any)["name"]; name == "github_get_issue" {
				t.Errorf("the admin's console lists %s, which runs on the member's private connection", name)
			}
		}
		w.flushAudit()
		var rows struct {
			Events []struct {
				Kind      string `json:"kind"`
				Principal string `json:"principal"`
				KeyID     string `json:"key_id"`
				Tool      string `json:"tool"`
			} `json:"events"`
		}
		w.want(w.admin, http.MethodGet, "/api/audit?tool=github_get_issue", "", http.StatusOK, &rows)
		var got []string
		for _, e := range rows.Events {
			got = append(got, e.Kind+" "+e.Principal+" "+e.KeyID)
		}
		want := "tool_call agent:" + a.ID + " " + memberKeyID(t, w)
		if !slices.Contains(got, want) {
			t.Errorf("audit rows %q, want %q", got, want)
		}
	})
}

// memberKeyID is the id of the member's API key, which Activity names for the member's
// console calls.
func memberKeyID(t *testing.T, w *world) string {
	t.Helper()
	var keys struct {
		Keys []struct {
			ID     string  `json:"id"`
			UserID string  `json:"user_id"`
			Agent  *string `json:"agent_id"`
		} `json:"keys"`
	}
	w.want(w.member, http.MethodGet, "/api/keys", "", http.StatusOK, &keys)
	for _, k := range keys.Keys {
		if k.UserID == w.member.userID && k.Agent == nil {
			return k.ID
		}
	}
	t.Fatal("the member has no key of their own")
	return ""
}
