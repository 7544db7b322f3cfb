package providers

import (
	"context"
	"encoding/json"
)

// ToolScope is the set of tools the surface a call came through serves: an MCP URL's
// tools as it lists them (its schema profile, its connection arguments, an agent's
// selection). Tool search mode's tools (search_tools, describe_tool, call_tool) search,
// describe and call within the scope of the call that runs them; without one (a REST
// call, a run) they act on the caller's tools as the router binds them.
type ToolScope interface {
	// SearchTools returns the scope's tools that best match the query, best first.
	SearchTools(query string, limit int) []ScopedTool
	// DescribeTool returns one tool's definition as the scope serves it.
	DescribeTool(name string) (definition any, ok bool)
	// CallTool runs one of the scope's tools as the surface runs a direct call of it
	// and returns its answer. confirmed says the person confirmed call_tool itself,
	// which confirms the call it makes; else the surface asks its own way where the
	// tool needs a confirmation.
	CallTool(ctx context.Context, name string, args json.RawMessage, confirmed bool) (any, error)
}

// ScopedTool is a tool a search found.
type ScopedTool struct {
	Name        string  `json:"name" jsonschema:"The tool's name, to pass to describe_tool and call_tool"`
	Title       string  `json:"title,omitempty" jsonschema:"The tool's title"`
	Description string  `json:"description" jsonschema:"What the tool does"`
	Score       float64 `json:"score" jsonschema:"How well it matches the query (higher is better)"`
}

// ScopeSearcher marks an operation that acts within the caller's ToolScope (tool search
// mode's): a surface that has a scope of its own puts it in the call's context.
type ScopeSearcher interface {
	SearchesScope()
}

type toolScopeKey struct{}

// WithToolScope returns ctx carrying the surface's tool scope.
func WithToolScope(ctx context.Context, s ToolScope) context.Context {
	return context.WithValue(ctx, toolScopeKey{}, s)
}

// ToolScopeFrom returns the surface's tool scope, if the call came with one.
func ToolScopeFrom(ctx context.Context) (ToolScope, bool) {
	s, ok := ctx.Value(toolScopeKey{}).(ToolScope)
	return s, ok
}
