package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ContentResult is an MCP tool result as the hub's typed one: each content block
// as the server's JSON, its structured content, and its isError.
func ContentResult(res *mcpgo.CallToolResult) (*providers.ContentResult, error) {
	out := &providers.ContentResult{Content: make([]json.RawMessage, 0, len(res.Content)), IsError: res.IsError}
	for _, c := range res.Content {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		out.Content = append(out.Content, raw)
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		out.StructuredContent = raw
	}
	return out, nil
}

// resultError is the error of a tool result the server marked isError: its text for
// runs, REST and the audit, and the result itself for MCP clients.
func resultError(server, tool string, res *providers.ContentResult) error {
	msg := res.Text()
	if msg == "" {
		msg = "the tool failed without saying why"
	}
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	return &providers.UpstreamError{Provider: Provider, Status: http.StatusOK, Code: switchboard.CodeUpstream, Reason: "tool_error",
		Message: fmt.Sprintf("%s on the remote MCP server %s: %s", tool, server, msg), Result: res}
}
