package mcpadapter

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// The tools of tool search mode, which replace the full list for catalogs too large
// for a model's context. They are the hub search provider's tools (providers/hub),
// run through the router like any other; a call of one searches the scope it came
// through (scopeCall).
const (
	searchToolName   = providers.SearchToolName
	describeToolName = providers.DescribeToolName
	callToolName     = providers.CallToolName
)

// searchesScope reports whether a binding is one of tool search mode's tools.
func searchesScope(b router.Binding) bool {
	_, ok := b.Tool.Op.(providers.ScopeSearcher)
	return ok
}

// modeBindings keeps the tools a scope serves in its tool mode: tool search mode's own
// only in search mode.
func modeBindings(all []router.Binding, mode agents.ToolMode) []router.Binding {
	if mode == agents.ToolModeSearch {
		return all
	}
	out := all[:0:0]
	for _, b := range all {
		if !searchesScope(b) {
			out = append(out, b)
		}
	}
	return out
}

// newSearchIndex indexes the scope's tools as it lists them, but for the search tools.
func newSearchIndex(st *scopeState) *providers.SearchIndex {
	entries := make([]providers.SearchEntry, 0, len(st.order))
	for _, name := range st.order {
		h := st.hub[name]
		if searchesScope(h.binding) {
			continue
		}
		t := h.tool()
		entries = append(entries, providers.SearchEntry{Name: t.Name, Title: t.Title, Description: t.Description, Input: t.RawInputSchema})
	}
	return providers.NewSearchIndex(entries)
}

// scopeCall is a call of one of tool search mode's tools at an MCP URL: the scope's
// tools as this refresh lists them, and the request whose session answers the
// questions of the call call_tool makes (its confirmation asked in the client's form).
type scopeCall struct {
	s   *scope
	st  *scopeState
	req mcp.CallToolRequest
}

var _ providers.ToolScope = scopeCall{}

// found returns one of the scope's tools that search finds (not the search tools).
func (c scopeCall) found(name string) (*hubTool, bool) {
	t, ok := c.st.hub[name]
	if !ok || searchesScope(t.binding) {
		return nil, false
	}
	return t, true
}

func (c scopeCall) SearchTools(query string, limit int) []providers.ScopedTool {
	if c.st.index == nil {
		return nil
	}
	hits := c.st.index.Search(query, limit)
	out := make([]providers.ScopedTool, 0, len(hits))
	for _, h := range hits {
		t := c.st.hub[h.Name].tool()
		out = append(out, providers.ScopedTool{Name: h.Name, Title: t.Title, Description: t.Description, Score: h.Score})
	}
	return out
}

func (c scopeCall) DescribeTool(name string) (any, bool) {
	t, ok := c.found(name)
	if !ok {
		return nil, false
	}
	return t.tool(), true
}

// CallTool runs the named tool as a direct call of it at this URL would run: through
// the scope's handler, so its confirmation is asked in the client's form and its
// call is audited under its own name. The person's confirmation of call_tool itself is
// not carried over: call_tool confirms itself, by the call it makes.
func (c scopeCall) CallTool(ctx context.Context, name string, args json.RawMessage, _ bool) (any, error) {
	if _, ok := c.found(name); !ok {
		return nil, hub.NotInScope(name)
	}
	inner := c.req
	inner.Params.Name = name
	inner.Params.Arguments = nil
	inner.Params.RawArguments = args
	res, err := c.st.handler(ctx, inner)
	if err != nil {
		return nil, err
	}
	out, err := remotemcp.ContentResult(res)
	if err == nil && res.Meta != nil {
		out.Meta = res.Meta.AdditionalFields // the run or task the call started
	}
	return out, err
}
