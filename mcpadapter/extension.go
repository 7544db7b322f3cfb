package mcpadapter

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// Extension adds to every MCP endpoint what another part of the hub serves there:
// management tools (always listed, even in tool search mode), resources, resource
// templates, server options (capabilities such as elicitation or tasks) and a wrapper
// around the calls of the hub's own tools. Every field is optional.
type Extension struct {
	// Name identifies the extension in logs.
	Name string
	// ServerOptions are applied to each scope's MCP server when it is built. They may
	// add hooks and capabilities, but not change how a tools/call of a hub tool runs
	// (tool middlewares, tool filters, schema validators, tracers, request loggers): the
	// hub runs plain calls itself with the server's hooks and its own middlewares
	// (plain_calls.go). An extension wraps hub tools' calls with WrapTool, which every
	// path runs.
	ServerOptions []server.ServerOption
	// Tools returns the management tools of a scope. It is called when the scope is
	// built and on each refresh; handlers find the principal with
	// switchboard.PrincipalFrom(ctx).
	Tools func(ctx context.Context, sc Scope) ([]server.ServerTool, error)
	// Resources returns fixed resources of a scope.
	Resources func(ctx context.Context, sc Scope) ([]server.ServerResource, error)
	// ResourceTemplates returns resource templates of a scope.
	ResourceTemplates func(ctx context.Context, sc Scope) ([]server.ServerResourceTemplate, error)
	// Prompts returns prompts of a scope, listed after the hub's own.
	Prompts func(ctx context.Context, sc Scope) ([]server.ServerPrompt, error)
	// Subscribable reports whether the scope offers updates of the resource uri, one
	// of the extension's that the scope's principal may read: resources/subscribe
	// (and subscriptions/listen) on any other URI is refused as not found. The
	// updates themselves reach the subscribed sessions through Adapter.RunChanged.
	Subscribable func(ctx context.Context, sc Scope, uri string) bool
	// WrapTool wraps the handler of the hub tools of a scope (not management tools):
	// for example to ask for confirmation before a destructive call. It is called once
	// per scope refresh, and the handler serves every hub tool of the scope: the tool
	// called is req.Params.Name (Scope.binding finds its binding).
	WrapTool func(sc Scope, next server.ToolHandlerFunc) server.ToolHandlerFunc
	// RunTools marks Tools as the run tools, which a scope lists only where its
	// run-tools setting (agents.RunTools, tenant or agent) serves them.
	RunTools bool
	// TaskSupport marks every hub tool as accepting task-augmented calls (MCP tasks);
	// the extension's WrapTool runs them (it sees req.Params.Task).
	TaskSupport bool
	// tasks serves the tasks of 2026-07-28 (runs_modern_tasks.go).
	tasks *runsExt
}

// Scope is one MCP endpoint as an extension sees it: the principal it serves and, at
// an agent URL, the agent.
type Scope struct {
	Principal switchboard.Principal
	// AgentID is set at an agent URL (/mcp/{tenant}/agents/{agent}).
	AgentID string
	// Agent is the agent at an agent URL, with its tool selection (nil elsewhere).
	Agent *agents.Agent

	s *scope
}

// Resolve turns a call of one of the scope's hub tools into the router request that
// runs it: the tool must be listed in this scope, and the connection is the one the
// tool is bound to (or the one named by the `connection` argument, which is removed).
// The error is a *switchboard.Error naming the field at fault.
func (sc Scope) Resolve(ctx context.Context, tool string, args json.RawMessage) (router.Request, *providers.Tool, error) {
	if sc.s == nil {
		return router.Request{}, nil, switchboard.NotFound("tool " + tool)
	}
	if err := sc.s.ensure(ctx); err != nil {
		return router.Request{}, nil, err
	}
	t, ok := sc.s.hubTool(tool)
	if !ok {
		return router.Request{}, nil, switchboard.NotFound("tool " + tool)
	}
	req, err := t.request(args)
	if err != nil {
		return router.Request{}, nil, err
	}
	return req, t.binding.Tool, nil
}

// ToolError renders an error as the tool result the adapter gives for a failed call:
// isError set and a message an agent can act on.
func (a *Adapter) ToolError(err error) *mcp.CallToolResult { return a.toolError(err) }
