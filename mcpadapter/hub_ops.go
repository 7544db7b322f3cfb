package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
)

// hubOps are the hub's own tools (providers/hub) by name, as their provider registers
// them: their definitions are what tools/list serves.
type hubOps map[string]*providers.Tool

// newHubOps registers the hub's tools in a registry of their own, which reflects their
// schemas.
func newHubOps(t *hub.Tools) hubOps {
	reg := providers.NewRegistry()
	if err := reg.Register(t.Spec()); err != nil {
		panic(fmt.Sprintf("hub tools: %v", err)) // the tools of providers/hub, fixed at build time
	}
	out := hubOps{}
	for _, tool := range reg.Tools(hub.Provider) {
		out[tool.Name] = tool
	}
	return out
}

// serverTool is the named hub tool as the MCP server serves it, answered by h.
func (o hubOps) serverTool(name string, h server.ToolHandlerFunc) server.ServerTool {
	return server.ServerTool{Tool: newToolDef(o[name], false, providers.ProfileFull).tool, Handler: h}
}

// invokeHubOp runs one of the hub's tools as the caller: its arguments are first read
// as In, so a fault is named by its field, then the operation answers; fail renders an
// error.
func invokeHubOp[In any](ctx context.Context, t *providers.Tool, req mcp.CallToolRequest, fail func(context.Context, error) *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	var in In
	if err := decodeRunArgs(req, &in); err != nil {
		return fail(ctx, err), nil
	}
	raw, err := rawArguments(req)
	if err != nil {
		return fail(ctx, switchboard.Invalid("arguments", "must be a JSON object")), nil
	}
	out, err := t.Op.Invoke(ctx, &providers.Call{Tenant: p.TenantID, Principal: p}, raw)
	if err != nil {
		return fail(ctx, err), nil
	}
	if cr, ok := out.(*providers.ContentResult); ok {
		return contentResult(cr), nil
	}
	return viewResult(out)
}
