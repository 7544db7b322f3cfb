package rig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// RemoteMCPToken is the bearer token the fake remote MCP server accepts.
const RemoteMCPToken = "remote-mcp-e2e-token-0123456789"

// FakeRemoteMCP is a remote MCP server (mcp-go's Streamable HTTP server) with one tool,
// search, behind a bearer token: a request without the token gets 401, as a real
// server's would. Its URL is the MCP endpoint.
func FakeRemoteMCP(t *testing.T) string {
	t.Helper()
	return FakeRemoteMCPWith(t, nil)
}

// FakeRemoteMCPWith is FakeRemoteMCP with what more adds to the server (prompts,
// resources, tools) before it serves.
func FakeRemoteMCPWith(t *testing.T, more func(*mcpserver.MCPServer)) string {
	t.Helper()
	opts := []mcpserver.ServerOption{mcpserver.WithToolCapabilities(false)}
	if more != nil {
		opts = append(opts, mcpserver.WithPromptCapabilities(false), mcpserver.WithResourceCapabilities(false, false))
	}
	s := mcpserver.NewMCPServer("fake-docs", "1.0.0", opts...)
	s.AddTool(mcp.NewTool("search", mcp.WithDescription("Search the docs."), mcp.WithString("query", mcp.Required(), mcp.Description("What to look for"))),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("found: " + req.GetString("query", "")), nil
		})
	if more != nil {
		more(s)
	}
	mcpHandler := mcpserver.NewStreamableHTTPServer(s, mcpserver.WithEndpointPath("/mcp"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+RemoteMCPToken {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
