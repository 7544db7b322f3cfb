package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/tenants"
)

// hubURL serves the rig's router at an MCP adapter and returns the tenant URL of r.a
// with a key of theirs.
func hubURL(t *testing.T, r *rig, ts *tenants.Store) (string, string) {
	t.Helper()
	adapter := mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts})
	r.conns.Subscribe(adapter.ConnectionChanged)
	hub := httptest.NewServer(adapter)
	t.Cleanup(func() { testwait.CloseServer(t, hub) })
	key, _, err := ts.CreateKey(context.Background(), r.a.TenantID, r.a.UserID, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	return hub.URL + mcpadapter.Prefix + r.a.TenantSlug, key
}

// TestRemoteRequestsReachTheClientOnEveryVersion: a remote MCP server's elicitation,
// sampling and roots requests during a call reach a client of the official Go SDK
// through the hub on each protocol version (on 2026-07-28 as the call's
// inputRequests, which the SDK answers by calling again), and the client's answers
// reach the remote, which reports them in its result.
func TestRemoteRequestsReachTheClientOnEveryVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: sdkAsker(t)}); err != nil {
		t.Fatal(err)
	}
	url, key := hubURL(t, r, ts)
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			note := func(s string) {
				mu.Lock()
				asked = append(asked, s)
				mu.Unlock()
			}
			c := sdk.NewClient(&sdk.Implementation{Name: "go-sdk", Version: "1.8.0"}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					note("elicit " + req.Params.Message)
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
				CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
					text, _ := req.Params.Messages[0].Content.(*sdk.TextContent)
					note("sample " + text.Text)
					return &sdk.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &sdk.TextContent{Text: "hi"}}, nil
				},
			})
			c.AddRoots(&sdk.Root{URI: "file:///work/project", Name: "project"})
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(key)}, DisableStandaloneSSE: true},
				&sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			for _, tc := range []struct{ tool, want, asked string }{
				{"up_ask", "accept Ada", "elicit Your name?"},
				{"up_sample", "test-model: hi", "sample Say hi"},
				{"up_roots", "roots file:///work/project", ""},
			} {
				if tc.tool == "up_roots" && version == "2026-07-28" {
					// The SDK (v1.8.0) reads a roots/list input request only with a params
					// member, which the request may leave out and mcp-go does; the hub's
					// roots/list on this version is checked in TestRemoteRequestsAsInputRequests.
					continue
				}
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
				if err != nil {
					t.Errorf("%s: %v", tc.tool, err)
					continue
				}
				text := ""
				if len(res.Content) > 0 {
					if tx, ok := res.Content[0].(*sdk.TextContent); ok {
						text = tx.Text
					}
				}
				if res.IsError || text != tc.want {
					t.Errorf("%s = %q (error %v), want %q: the client's answer back at the remote", tc.tool, text, res.IsError, tc.want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if got, want := strings.Join(asked, "|"), "elicit Your name?|sample Say hi"; got != want {
				t.Errorf("the client was asked %q, want %q", got, want)
			}
		})
	}
}

// TestRemoteRequestsAsInputRequests: on 2026-07-28 the hub answers a call whose remote
// asks something with resultType input_required, the remote's request in
// inputRequests and a requestState; the call again with the answer in inputResponses
// and that requestState gets the remote's result. A requestState the hub did not give,
// one given for another call, or one used already, is refused as invalid params naming
// requestState.
func TestRemoteRequestsAsInputRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: sdkAsker(t)}); err != nil {
		t.Fatal(err)
	}
	url, key := hubURL(t, r, ts)
	call := func(tool string, extra map[string]any, caps map[string]any) map[string]any {
		t.Helper()
		params := map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": map[string]any{
			mcpgo.MetaKeyProtocolVersion:    mcpgo.ProtocolVersion20260728,
			mcpgo.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
			mcpgo.MetaKeyClientCapabilities: caps,
		}}
		for k, v := range extra {
			params[k] = v
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcpgo.HeaderProtocolVersion, mcpgo.ProtocolVersion20260728)
		req.Header.Set(mcpgo.HeaderMethod, "tools/call")
		req.Header.Set(mcpgo.HeaderName, tool)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var msg struct {
			Result map[string]any `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil || msg.Result == nil && msg.Error == nil {
			t.Fatalf("%s: status %d %s", tool, resp.StatusCode, raw)
		}
		if msg.Error != nil {
			// A refusal: invalid params, its message as refusal.
			return map[string]any{"refusal": fmt.Sprintf("%d %d %s", resp.StatusCode, msg.Error.Code, msg.Error.Message)}
		}
		return msg.Result
	}
	refused := func(res map[string]any) bool {
		r, _ := res["refusal"].(string)
		return strings.HasPrefix(r, "400 -32602 ") && strings.Contains(r, "requestState")
	}
	text := func(res map[string]any) string {
		content, _ := res["content"].([]any)
		if len(content) == 0 {
			return ""
		}
		first, _ := content[0].(map[string]any)
		s, _ := first["text"].(string)
		return s
	}
	form := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}

	first := call("up_ask", nil, form)
	if first["resultType"] != "input_required" {
		t.Fatalf("up_ask = %v, want resultType input_required", first)
	}
	requests, _ := first["inputRequests"].(map[string]any)
	state, _ := first["requestState"].(string)
	if len(requests) != 1 || state == "" {
		t.Fatalf("up_ask = %v, want one input request and a requestState", first)
	}
	var id string
	for k, v := range requests {
		id = k
		req, _ := v.(map[string]any)
		params, _ := req["params"].(map[string]any)
		if req["method"] != "elicitation/create" || params["message"] != "Your name?" {
			t.Errorf("input request %s = %v, want the remote's elicitation/create", k, v)
		}
	}
	// Another tool cannot use the state.
	if res := call("up_sample", map[string]any{"requestState": state, "inputResponses": map[string]any{id: map[string]any{"action": "accept"}}}, form); !refused(res) {
		t.Errorf("up_sample with up_ask's requestState = %v, want a refusal naming requestState", res)
	}
	answer := map[string]any{"requestState": state, "inputResponses": map[string]any{id: map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}}}}
	if res := call("up_ask", answer, form); res["isError"] == true || text(res) != "accept Grace" {
		t.Errorf("up_ask answered = %v, want the remote's result with the answer", res)
	}
	if res := call("up_ask", answer, form); !refused(res) {
		t.Errorf("up_ask answered twice = %v, want a refusal naming requestState", res)
	}
	if res := call("up_ask", map[string]any{"requestState": "held.forged", "inputResponses": map[string]any{id: map[string]any{"action": "accept"}}}, form); !refused(res) {
		t.Errorf("up_ask with a forged requestState = %v, want a refusal naming requestState", res)
	}
	// A client that declared no elicitation: the remote learns why, and the call it
	// fails for that is refused naming the capability (-32021, SEP-2575).
	if res := call("up_ask", nil, map[string]any{}); !strings.Contains(fmt.Sprint(res["refusal"]), "-32021") || !strings.Contains(fmt.Sprint(res["refusal"]), "elicitation") {
		t.Errorf("up_ask from a client without elicitation = %v, want -32021 naming elicitation", res)
	}
	// Sampling and roots come the same way.
	samp := call("up_sample", nil, map[string]any{"sampling": map[string]any{}})
	sreqs, _ := samp["inputRequests"].(map[string]any)
	for k, v := range sreqs {
		if m, _ := v.(map[string]any); m["method"] != "sampling/createMessage" {
			t.Errorf("sampling input request = %v", v)
		}
		res := call("up_sample", map[string]any{"requestState": samp["requestState"], "inputResponses": map[string]any{k: map[string]any{
			"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "yo"}}}}, map[string]any{"sampling": map[string]any{}})
		if text(res) != "m: yo" {
			t.Errorf("up_sample answered = %v", res)
		}
	}
	if len(sreqs) != 1 {
		t.Errorf("up_sample = %v, want one input request", samp)
	}
	roots := map[string]any{"roots": map[string]any{}}
	rl := call("up_roots", nil, roots)
	rreqs, _ := rl["inputRequests"].(map[string]any)
	for k, v := range rreqs {
		if m, _ := v.(map[string]any); m["method"] != "roots/list" {
			t.Errorf("roots input request = %v", v)
		}
		res := call("up_roots", map[string]any{"requestState": rl["requestState"], "inputResponses": map[string]any{k: map[string]any{
			"roots": []any{map[string]any{"uri": "file:///srv/a"}}}}}, roots)
		if text(res) != "roots file:///srv/a" {
			t.Errorf("up_roots answered = %v", res)
		}
	}
	if len(rreqs) != 1 {
		t.Errorf("up_roots = %v, want one input request", rl)
	}
}

// rooter answers roots/list with one root.
type rooter struct{}

func (rooter) ListRoots(context.Context, mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	return &mcpgo.ListRootsResult{Roots: []mcpgo.Root{{URI: "file:///work/mcp-go", Name: "work"}}}, nil
}

// TestRemoteRequestsReachAnMCPGoClient: mcp-go's client, on each era it speaks,
// answers a remote server's elicitation, sampling and roots requests through the hub
// (on 2026-07-28 it fulfils the call's inputRequests and calls again).
func TestRemoteRequestsReachAnMCPGoClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: sdkAsker(t)}); err != nil {
		t.Fatal(err)
	}
	url, key := hubURL(t, r, ts)
	for _, version := range []string{mcpgo.LATEST_LEGACY_PROTOCOL_VERSION, mcpgo.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) {
			p := &person{}
			tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr, client.WithElicitationHandler(p), client.WithSamplingHandler(p), client.WithRootsHandler(rooter{}))
			t.Cleanup(func() { _ = c.Close() })
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcpgo.InitializeRequest{}
			init.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go", Version: "1.2.1"}
			init.Params.ProtocolVersion = version
			res, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != version {
				t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
			}
			for _, tc := range []struct{ tool, want string }{
				{"up_ask", "accept Ada"}, {"up_sample", "test-model: hi"}, {"up_roots", "roots file:///work/mcp-go"},
			} {
				req := mcpgo.CallToolRequest{}
				req.Params.Name = tc.tool
				out, err := c.CallTool(ctx, req)
				if err != nil {
					t.Errorf("%s: %v", tc.tool, err)
					continue
				}
				text := ""
				if len(out.Content) > 0 {
					if tx, ok := out.Content[0].(mcpgo.TextContent); ok {
						text = tx.Text
					}
				}
				if out.IsError || text != tc.want {
					t.Errorf("%s = %q (error %v), want %q", tc.tool, text, out.IsError, tc.want)
				}
			}
		})
	}
}

// TestHeldCallOutlivesItsFirstStream: a remote tool that, once the client answered its
// elicitation on 2026-07-28, sends many progress notifications still finishes: the
// notifications of a held call whose first request was answered have no stream, and
// are dropped rather than waited on.
func TestHeldCallOutlivesItsFirstStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	srv := sdk.NewServer(&sdk.Implementation{Name: "chatty", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask_then_count", Description: "Ask, then count.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: "Go?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
			if err != nil {
				return nil, err
			}
			for i := range 300 {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 300}); err != nil {
					return nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "counted after " + res.Action}}}, nil
		})
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() { testwait.CloseServer(t, h) })
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: h.URL}); err != nil {
		t.Fatal(err)
	}
	url, key := hubURL(t, r, ts)
	hc := &http.Client{Timeout: time.Minute}
	call := func(extra map[string]any) map[string]any {
		t.Helper()
		params := map[string]any{"name": "up_ask_then_count", "arguments": map[string]any{}, "_meta": map[string]any{
			"progressToken":                 "p1",
			mcpgo.MetaKeyProtocolVersion:    mcpgo.ProtocolVersion20260728,
			mcpgo.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		}}
		for k, v := range extra {
			params[k] = v
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcpgo.HeaderProtocolVersion, mcpgo.ProtocolVersion20260728)
		req.Header.Set(mcpgo.HeaderMethod, "tools/call")
		req.Header.Set(mcpgo.HeaderName, "up_ask_then_count")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		// The answer may come as SSE, after progress events: its last data line.
		var result map[string]any
		for _, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
			var msg struct {
				Result map[string]any `json:"result"`
			}
			if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil {
				result = msg.Result
			}
		}
		if result == nil {
			t.Fatalf("tools/call: no result in %s", raw)
		}
		return result
	}
	first := call(nil)
	state, _ := first["requestState"].(string)
	requests, _ := first["inputRequests"].(map[string]any)
	if state == "" || len(requests) != 1 {
		t.Fatalf("first answer = %v, want the remote's elicitation", first)
	}
	var id string
	for k := range requests {
		id = k
	}
	res := call(map[string]any{"requestState": state, "inputResponses": map[string]any{id: map[string]any{"action": "accept", "content": map[string]any{}}}})
	content, _ := res["content"].([]any)
	if len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "counted after accept") {
		t.Errorf("the answered call = %v, want the remote's result", res)
	}
}
