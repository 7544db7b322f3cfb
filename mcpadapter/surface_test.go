package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

func TestToolSearchMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.agents.setSettings(agents.Settings{TenantID: "ten_a", Confirm: agents.ConfirmNever, ToolMode: agents.ToolModeSearch})
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"call_tool", "describe_tool", "search_tools"}, toolNames(t, c)); diff != "" {
		t.Errorf("tools in search mode (-want +got):\n%s", diff)
	}
	searches := []struct {
		name  string
		query string
		want  []string
	}{
		{name: "name words rank first", query: "create note", want: []string{"notes_create_note", "notes_last_note"}},
		{name: "description words", query: "read the last", want: []string{"notes_last_note"}},
		{name: "parameter names", query: "text", want: []string{"notes_create_note"}},
		{name: "prefixes", query: "creat", want: []string{"notes_create_note"}},
		{name: "nothing matches", query: "kubernetes", want: []string{}},
	}
	for _, tt := range searches {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "search_tools", map[string]any{"query": tt.query})
			if res.IsError {
				t.Fatalf("search: %s", text(res))
			}
			var out struct {
				Tools []struct {
					Name        string  `json:"name"`
					Description string  `json:"description"`
					Score       float64 `json:"score"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, h := range out.Tools {
				got = append(got, h.Name)
				if h.Description == "" || h.Score <= 0 {
					t.Errorf("hit %+v lacks a description or a score", h)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("search %q (-want +got):\n%s", tt.query, diff)
			}
		})
	}
	desc := call(t, c, "describe_tool", map[string]any{"name": "notes_create_note"})
	var tool struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(text(desc)), &tool); err != nil || tool.Name != "notes_create_note" || tool.InputSchema["properties"] == nil {
		t.Errorf("describe_tool = %s (%v)", text(desc), err)
	}
	ran := call(t, c, "call_tool", map[string]any{"name": "notes_create_note", "arguments": map[string]any{"text": "via search"}})
	if ran.IsError || !strings.Contains(text(ran), `"text":"via search"`) {
		t.Errorf("call_tool = %s", text(ran))
	}
	if r := testwait.Recv(t, e.seen, "the upstream to receive the call"); r.URL.Path != "/notes" {
		t.Errorf("upstream got %s", r.URL.Path)
	}
	bad := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{name: "call_tool of an unknown tool", tool: "call_tool", args: map[string]any{"name": "notes_delete_everything"}, want: `"name"`},
		{name: "call_tool with bad arguments", tool: "call_tool", args: map[string]any{"name": "notes_create_note", "arguments": map[string]any{"text": 5}}, want: `"text"`},
		{name: "search without a query", tool: "search_tools", args: map[string]any{"query": " "}, want: `"query"`},
		{name: "describe of another tenant's tool", tool: "describe_tool", args: map[string]any{"name": "github_create_issue"}, want: `"name"`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, tt.tool, tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("%s = %v %q, want a tool error naming %s", tt.tool, res.IsError, text(res), tt.want)
			}
		})
	}
}

func TestOriginChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{name: "no Origin (a non-browser client)", want: http.StatusOK},
		{name: "the deployment's own origin", header: map[string]string{"Origin": "https://hub.test"}, want: http.StatusOK},
		{name: "a configured origin", header: map[string]string{"Origin": "https://app.example.com"}, want: http.StatusOK},
		{name: "a loopback origin on a loopback listener", header: map[string]string{"Origin": "http://localhost:3000"}, want: http.StatusOK},
		{name: "another site", header: map[string]string{"Origin": "https://evil.example.com"}, want: http.StatusForbidden},
		{name: "a configured origin's sibling", header: map[string]string{"Origin": "https://app.example.com.evil.test"}, want: http.StatusForbidden},
		{name: "a null origin", header: map[string]string{"Origin": "null"}, want: http.StatusForbidden},
		{name: "a rebound DNS name", header: map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"}, want: http.StatusForbidden},
		{name: "a rebound DNS name without Origin", header: map[string]string{"Host": "evil.example.com"}, want: http.StatusForbidden},
		{name: "the public host", header: map[string]string{"Host": "hub.test", "Origin": "https://hub.test"}, want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := postInitialize(t, e, "/mcp/acme", "key-alice", tt.header); got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
}

// rawPost posts body to the tenant URL as alice and returns the status and body.
func rawPost(t *testing.T, e *env, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer key-alice")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMalformedRequestsGetJSONRPCErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.adapter.opts.MaxBodyBytes = 1 << 10
	tests := []struct {
		name string
		body string
		want string
	}{
		{name: "not JSON", body: `{"jsonrpc":`, want: `"code":-32700`},
		{name: "not an object", body: `42`, want: `"code":-32`},
		{name: "method not a string", body: `{"jsonrpc":"2.0","id":1,"method":5}`, want: `"code":-32`},
		{name: "too large", body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4<<10) + `"}}`, want: `"code":-32700`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := rawPost(t, e, tt.body, nil)
			if status < 400 || status >= 500 || !strings.Contains(body, `"jsonrpc":"2.0"`) || !strings.Contains(body, tt.want) {
				t.Errorf("status %d body %s, want a 4xx JSON-RPC error with %s", status, body, tt.want)
			}
		})
	}
	for _, method := range []string{http.MethodPut, http.MethodPatch, http.MethodOptions} {
		t.Run(method, func(t *testing.T) {
			req, _ := http.NewRequest(method, e.srv.URL+"/mcp/acme", nil)
			req.Header.Set("Authorization", "Bearer key-alice")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s = %d, want 405", method, resp.StatusCode)
			}
		})
	}
}

// modernPost sends a request of protocol 2026-07-28: no initialize, no session.
func modernPost(t *testing.T, e *env, method string, params map[string]any) map[string]any {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "modern", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	header := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728, mcp.HeaderMethod: method}
	if name, ok := params["name"].(string); ok {
		header[mcp.HeaderName] = name
	}
	status, raw := rawPost(t, e, string(body), header)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d %s", method, status, raw)
	}
	var msg map[string]any
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		t.Fatalf("%s: %s: %v", method, raw, err)
	}
	return msg
}

func TestStatelessProtocolOnTheSameURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	list := modernPost(t, e, "tools/list", nil)
	result, _ := list["result"].(map[string]any)
	tools, _ := result["tools"].([]any)
	if len(tools) != 2 {
		t.Fatalf("modern tools/list = %v", list)
	}
	res := modernPost(t, e, "tools/call", map[string]any{"name": "notes_create_note", "arguments": map[string]any{"text": "stateless"}})
	raw, _ := json.Marshal(res["result"])
	if !strings.Contains(string(raw), `stateless`) || strings.Contains(string(raw), `"isError":true`) {
		t.Errorf("modern tools/call = %s", raw)
	}
	// A session-era client works against the same URL at the same time.
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(toolNames(t, c)) != 2 {
		t.Error("a session-era client lost its tools")
	}
}

func TestResourcesAndCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rs, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(rs.Resources) != 1 || rs.Resources[0].URI != "switchboard://connections" {
		t.Fatalf("resources = %+v, %v", rs, err)
	}
	read := func(uri string) (string, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			return "", err
		}
		return res.Contents[0].(mcp.TextResourceContents).Text, nil
	}
	all, err := read("switchboard://connections")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"connections":[{"id":"con_a","provider":"notes","label":"alice@notes","needs_reconnect":false,"tools":["notes_create_note","notes_last_note"]}]}`
	if all != want {
		t.Errorf("connections resource = %s, want %s", all, want)
	}
	one, err := read("switchboard://connections/con_a")
	if err != nil || !strings.HasPrefix(one, `{"id":"con_a"`) {
		t.Errorf("con_a = %s, %v", one, err)
	}
	_, errOther := read("switchboard://connections/con_b")
	_, errMissing := read("switchboard://connections/con_nope")
	if errOther == nil || errMissing == nil {
		t.Fatalf("another tenant's connection: %v; a missing one: %v; want errors", errOther, errMissing)
	}
	if strings.ReplaceAll(errOther.Error(), "con_b", "X") != strings.ReplaceAll(errMissing.Error(), "con_nope", "X") {
		t.Errorf("another tenant's connection answers %q, a missing one %q", errOther, errMissing)
	}
	tpl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpl.ResourceTemplates) != 1 {
		t.Fatalf("templates = %+v, %v", tpl, err)
	}

	completions := []struct {
		name string
		ref  any
		arg  string
		val  string
		ctx  map[string]string
		want []string
	}{
		{name: "connection of the template", ref: mcp.ResourceReference{Type: "ref/resource", URI: "switchboard://connections/{connection}"}, arg: "connection", val: "con", want: []string{"con_a"}},
		{name: "connection by label", ref: mcp.ResourceReference{Type: "ref/resource", URI: "switchboard://connections/{connection}"}, arg: "connection", val: "alice", want: []string{"con_a"}},
		{name: "no other tenant's connection", ref: mcp.ResourceReference{Type: "ref/resource", URI: "switchboard://connections/{connection}"}, arg: "connection", val: "con_b", want: []string{}},
		{name: "tool of use_tool", ref: mcp.PromptReference{Type: "ref/prompt", Name: "use_tool"}, arg: "tool", val: "notes_c", want: []string{"notes_create_note"}},
		{name: "connection of use_tool", ref: mcp.PromptReference{Type: "ref/prompt", Name: "use_tool"}, arg: "connection", val: "", ctx: map[string]string{"tool": "notes_last_note"}, want: []string{"alice@notes"}},
		{name: "unknown prompt", ref: mcp.PromptReference{Type: "ref/prompt", Name: "nope"}, arg: "x", val: "y", want: []string{}},
	}
	for _, tt := range completions {
		t.Run(tt.name, func(t *testing.T) {
			req := mcp.CompleteRequest{}
			req.Params.Ref = tt.ref
			req.Params.Argument.Name, req.Params.Argument.Value = tt.arg, tt.val
			req.Params.Context.Arguments = tt.ctx
			res, err := c.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Completion.Values); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgressAndLogging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		raw, _ := json.Marshal(n.Params.AdditionalFields)
		got = append(got, n.Method+" "+string(raw))
	})
	ctx := context.Background()
	setLevel := mcp.SetLevelRequest{}
	setLevel.Params.Level = mcp.LoggingLevelInfo
	if err := c.SetLevel(ctx, setLevel); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "notes_create_note"
	req.Params.Arguments = map[string]any{"text": "hi"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	testwait.Recv(t, e.seen, "the upstream to receive the call")
	// The call's notifications come on its own stream, before its result.
	mu.Lock()
	defer mu.Unlock()
	var progress, logs []string
	for _, g := range got {
		switch {
		case strings.HasPrefix(g, "notifications/progress"):
			progress = append(progress, g)
		case strings.HasPrefix(g, "notifications/message"):
			logs = append(logs, g)
		}
	}
	if len(progress) != 1 || !strings.Contains(progress[0], `"progressToken":"tok-1"`) || !strings.Contains(progress[0], `"progress":1`) {
		t.Errorf("progress notifications = %v, want one for the upstream response", progress)
	}
	// At level info the line of the call's start is sent, the debug line of its end not.
	if len(logs) != 1 || !strings.Contains(logs[0], `"level":"info"`) || !strings.Contains(logs[0], `"event":"tool_call"`) {
		t.Errorf("log notifications = %v, want one info line (all: %v)", logs, got)
	}
	for _, g := range got {
		if strings.Contains(g, "tok-con_a") {
			t.Errorf("a notification carries the connection's token: %s", g)
		}
	}
}

func TestCancellationStopsTheUpstreamRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	blocked := make(chan struct{})
	cancelled := make(chan struct{})
	e.onUpstream(func(r *http.Request) bool {
		if !strings.Contains(readBody(r), "slow") {
			return false
		}
		close(blocked)
		<-r.Context().Done()
		close(cancelled)
		return true
	})
	// Initialize a session by hand, so the cancellation can name the request.
	status, _, session := postSession(t, e, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d session %q", status, session)
	}
	postSession(t, e, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	done := make(chan string, 1)
	go func() {
		_, body, _ := postSession(t, e, session, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"notes_create_note","arguments":{"text":"slow"}}}`)
		done <- body
	}()
	select {
	case <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the upstream")
	}
	postSession(t, e, session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1","reason":"user stopped it"}}`)
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("notifications/cancelled did not cancel the upstream request")
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call's HTTP request never ended")
	}
}

// postSession posts a JSON-RPC message in a session and returns the status, the body
// and the session id the response names.
func postSession(t *testing.T, e *env, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/acme", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer key-alice")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
}

func readBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

func TestExtensionsAddToEveryScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var wrapped []string
	ext := Extension{
		Name: "test",
		Tools: func(_ context.Context, sc Scope) ([]server.ServerTool, error) {
			tool := mcp.NewTool("switchboard_whoami", mcp.WithDescription("Who is calling."), mcp.WithReadOnlyHintAnnotation(true))
			return []server.ServerTool{{Tool: tool, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				p, _ := switchboard.PrincipalFrom(ctx)
				r, tl, err := sc.Resolve(ctx, "notes_create_note", json.RawMessage(`{"text":"x"}`))
				if err != nil {
					return nil, err
				}
				return mcp.NewToolResultText(p.ID() + " " + sc.AgentID + " " + r.ConnectionID + " " + tl.Name), nil
			}}}, nil
		},
		WrapTool: func(sc Scope, next server.ToolHandlerFunc) server.ToolHandlerFunc {
			return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				b, _ := sc.binding(req.Params.Name)
				mu.Lock()
				wrapped = append(wrapped, sc.Principal.ID()+" "+b.Tool.Name)
				mu.Unlock()
				return next(ctx, req)
			}
		},
	}
	e.adapter.opts.Extensions = []Extension{ext}
	c, err := e.clientAt(t, "/mcp/acme/agents/agt_triage", "key-triage")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes_create_note", "switchboard_whoami"}, toolNames(t, c)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if got := text(call(t, c, "switchboard_whoami", map[string]any{})); got != "agent:agt_triage agt_triage con_a notes_create_note" {
		t.Errorf("whoami = %q", got)
	}
	call(t, c, "notes_create_note", map[string]any{"text": "wrapped"})
	testwait.Recv(t, e.seen, "the upstream to receive the call")
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"agent:agt_triage notes_create_note"}, wrapped); diff != "" {
		t.Errorf("wrapped calls (-want +got):\n%s", diff)
	}
}
