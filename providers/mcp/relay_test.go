package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/tenants"
)

// sdkAsker is a remote MCP server of the official Go SDK whose tools turn to their
// client during the call: log writes log messages, ask elicits an answer, and sample
// asks for an LLM completion; each returns what it got.
func sdkAsker(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	object := map[string]any{"type": "object"}
	srv.AddTool(&sdk.Tool{Name: "log", Description: "Log.", InputSchema: object},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			for _, l := range []struct {
				level sdk.LoggingLevel
				data  string
			}{{"debug", "details"}, {"info", "started"}, {"warning", "slow"}, {"info", "done"}} {
				if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: l.level, Logger: "asker", Data: l.data}); err != nil {
					return nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "logged"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "ask", Description: "Ask.", InputSchema: object},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: "Your name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s %v", res.Action, res.Content["name"])}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "sample", Description: "Sample.", InputSchema: object},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hi"}}}})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "sampling failed: " + err.Error()}}}, nil
			}
			text, _ := res.Content.(*sdk.TextContent)
			if text == nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("sampling answered %T", res.Content)}}}, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Model + ": " + text.Text}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "roots", Description: "Roots.", InputSchema: object},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "roots failed: " + err.Error()}}}, nil
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "roots " + strings.Join(uris, " ")}}}, nil
		})
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() {
		testwait.CloseServer(t, h)
	})
	return h.URL
}

// person answers the hub's elicitation and sampling requests, and records them.
type person struct {
	mu       sync.Mutex
	asked    []string
	messages []string
}

func (p *person) Elicit(_ context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params.Message)
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada"}}}, nil
}

func (p *person) CreateMessage(_ context.Context, req mcpgo.CreateMessageRequest) (*mcpgo.CreateMessageResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range req.Messages {
		if tc, ok := m.Content.(mcpgo.TextContent); ok {
			p.messages = append(p.messages, tc.Text)
		}
	}
	return &mcpgo.CreateMessageResult{Model: "test-model", SamplingMessage: mcpgo.SamplingMessage{Role: mcpgo.RoleAssistant, Content: mcpgo.NewTextContent("hi")}}, nil
}

// TestRemoteTurnsToTheCaller: what a remote MCP server asks of its client during a
// call reaches the client that called through the hub, and the answer goes back: its
// log messages (at the calling session's level, in order, before the result), its
// elicitation (answered by the person) and its sampling request (answered by the
// client's model). A client that cannot elicit or sample gets the remote's own
// account of the refusal.
func TestRemoteTurnsToTheCaller(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: sdkAsker(t)}); err != nil {
		t.Fatal(err)
	}
	call := func(c *client.Client, name string) (string, bool) {
		t.Helper()
		req := mcpgo.CallToolRequest{}
		req.Params.Name = name
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var texts []string
		for _, content := range res.Content {
			if tc, ok := content.(mcpgo.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return strings.Join(texts, "\n"), res.IsError
	}

	p := &person{}
	c := hubClient(t, r, ts, false, client.WithElicitationHandler(p), client.WithSamplingHandler(p))
	var mu sync.Mutex
	var logs []string
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method != string(mcpgo.MethodNotificationMessage) || n.Params.AdditionalFields["logger"] != "asker" {
			return
		}
		mu.Lock()
		logs = append(logs, fmt.Sprintf("%v %v", n.Params.AdditionalFields["level"], n.Params.AdditionalFields["data"]))
		mu.Unlock()
	})
	lreq := mcpgo.SetLevelRequest{}
	lreq.Params.Level = mcpgo.LoggingLevelInfo
	if err := c.SetLevel(ctx, lreq); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(c, "up_log"); isErr || text != "logged" {
		t.Fatalf("up_log = %q (error %v)", text, isErr)
	}
	mu.Lock()
	got := slices.Clone(logs)
	mu.Unlock()
	if want := []string{"info started", "warning slow", "info done"}; !slices.Equal(got, want) {
		t.Errorf("the remote's log messages before the result = %q, want %q (debug is below the session's level)", got, want)
	}
	if text, isErr := call(c, "up_ask"); isErr || text != "accept Ada" {
		t.Errorf("up_ask = %q (error %v), want the person's answer relayed back", text, isErr)
	}
	// The sampling request goes on the call's own stream (mcp-go sends its own on the
	// client's GET stream only), with or without a GET stream open.
	if text, isErr := call(c, "up_sample"); isErr || text != "test-model: hi" {
		t.Errorf("up_sample = %q (error %v), want the client's completion relayed back", text, isErr)
	}
	g := hubClient(t, r, ts, true, client.WithSamplingHandler(p))
	if text, isErr := call(g, "up_sample"); isErr || text != "test-model: hi" {
		t.Errorf("up_sample with a GET stream open = %q (error %v), want the client's completion relayed back", text, isErr)
	}
	p.mu.Lock()
	if !slices.Equal(p.asked, []string{"Your name?"}) || !slices.Equal(p.messages, []string{"Say hi", "Say hi"}) {
		t.Errorf("the client was asked %q and sampled %q; want the remote's question and message", p.asked, p.messages)
	}
	p.mu.Unlock()

	// A client without the capabilities: the remote learns why, and says so.
	bare := hubClient(t, r, ts, false)
	if text, isErr := call(bare, "up_ask"); !isErr || !strings.Contains(text, "does not support elicitation") {
		t.Errorf("up_ask from a client that cannot elicit = %q (error %v)", text, isErr)
	}
	if text, isErr := call(bare, "up_sample"); !isErr || !strings.Contains(text, "does not support sampling") {
		t.Errorf("up_sample from a client that cannot sample = %q (error %v)", text, isErr)
	}
}
