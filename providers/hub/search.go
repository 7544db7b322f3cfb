package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// SearchProvider is the name of the provider of tool search mode's tools
// (search_tools, describe_tool, call_tool).
const SearchProvider = "hub_search"

// Router is what tool search needs of the router when the call came with no scope of
// its surface (REST, a run): the caller's tools, and a call of one of them.
type Router interface {
	Tools(ctx context.Context, p switchboard.Principal) ([]router.Binding, error)
	Execute(ctx context.Context, p switchboard.Principal, req router.Request) (any, error)
}

// SearchSpec is the provider of tool search mode's tools: connectionless, named as
// they are listed, and ambient (every caller has them; an MCP URL lists them in search
// mode, in place of the tools they find). They search, describe and call the tools of
// the surface the call came through (providers.ToolScope), else the caller's tools as
// r binds them. call_tool leaves the confirmation to the tool it calls.
func SearchSpec(r Router) providers.Spec {
	return providers.Spec{Name: SearchProvider, Title: "Tool search",
		Description:    "Find this endpoint's tools by keywords, read one's definition, and call it by name.",
		Connectionless: true, Ambient: true, OwnNames: true, ConfirmsItself: true,
		Operations: []providers.Op{searchTools(r), describeTool(r), callTool(r)}}
}

// SearchInput is the input of search_tools.
type SearchInput struct {
	Query string `json:"query" jsonschema:"Keywords, for example \"create github issue\"" schema:"minLength=1"`
	Limit int    `json:"limit,omitempty" jsonschema:"Maximum number of tools to return (default 10)" schema:"minimum=1,maximum=50"`
}

// SearchOutput is the answer of search_tools.
type SearchOutput struct {
	Tools []providers.ScopedTool `json:"tools" jsonschema:"The tools found, best first"`
	Count int                    `json:"count" jsonschema:"How many were found"`
}

// ToolNameInput names one tool of the endpoint.
type ToolNameInput struct {
	Name string `json:"name" jsonschema:"The tool's name, from search_tools"`
}

// CallToolInput is the input of call_tool.
type CallToolInput struct {
	Name      string         `json:"name" jsonschema:"The tool's name, from search_tools"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"The tool's arguments, as the input schema describe_tool returns says"`
}

// searchOp is one of tool search mode's tools: it acts within the caller's tool scope.
// Its input is reflected from In; its output schema is declared (nil: the answer is the
// called tool's own, of no one schema).
type searchOp[In any] struct {
	info   providers.Info
	output string
	run    func(ctx context.Context, c *providers.Call, in In) (any, error)
}

// SearchesScope marks the operation as acting within the surface's tool scope.
func (searchOp[In]) SearchesScope() {}

func (o searchOp[In]) Info() providers.Info { return o.info }

func (o searchOp[In]) InputSchema() (*jsonschema.Schema, error) { return providers.Reflect[In]() }

func (o searchOp[In]) OutputSchema() (*jsonschema.Schema, error) {
	if o.output == "" {
		return nil, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(o.output), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (o searchOp[In]) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	var in In
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, switchboard.Invalid("arguments", err.Error())
	}
	return o.run(ctx, c, in)
}

var readOnlyHub = providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true}

// searchOutput and definitionOutput are the output schemas of search_tools and
// describe_tool.
const (
	searchOutput = `{"type":"object","properties":{"tools":{"type":"array","description":"The tools found, best first","items":{"type":"object",` +
		`"properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"score":{"type":"number"}},"required":["name","description","score"]}},` +
		`"count":{"type":"integer","description":"How many were found"}},"required":["tools","count"]}`
	definitionOutput = `{"type":"object","properties":{"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},` +
		`"inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"type":"object"}},"required":["name","inputSchema"]}`
)

func searchTools(r Router) providers.Op {
	return searchOp[SearchInput]{
		info: providers.Info{Name: providers.SearchToolName, Title: "Search tools", Hints: readOnlyHub,
			Description: "Search this endpoint's tools by keywords (matched against tool names, descriptions and parameters); " +
				"returns the best matches first. Then read a tool's full definition with describe_tool and run it with call_tool."},
		output: searchOutput,
		run: func(ctx context.Context, c *providers.Call, in SearchInput) (any, error) {
			if strings.TrimSpace(in.Query) == "" {
				return nil, switchboard.Invalid("query", "is required")
			}
			limit := in.Limit
			if limit == 0 {
				limit = 10
			}
			s, err := scopeOf(ctx, r, c)
			if err != nil {
				return nil, err
			}
			found := s.SearchTools(in.Query, limit)
			if found == nil {
				found = []providers.ScopedTool{}
			}
			return SearchOutput{Tools: found, Count: len(found)}, nil
		},
	}
}

func describeTool(r Router) providers.Op {
	return searchOp[ToolNameInput]{
		info: providers.Info{Name: providers.DescribeToolName, Title: "Describe tool", Hints: readOnlyHub,
			Description: "Return one tool's full definition: description, input schema (its arguments), output schema and annotations."},
		output: definitionOutput,
		run: func(ctx context.Context, c *providers.Call, in ToolNameInput) (any, error) {
			s, err := scopeOf(ctx, r, c)
			if err != nil {
				return nil, err
			}
			def, ok := s.DescribeTool(in.Name)
			if !ok {
				return nil, NotInScope(in.Name)
			}
			return def, nil
		},
	}
}

func callTool(r Router) providers.Op {
	return searchOp[CallToolInput]{
		info: providers.Info{Name: providers.CallToolName, Title: "Call tool", Hints: providers.Hints{Destructive: true},
			Description: "Run one of this endpoint's tools by name with its arguments (an object matching the input schema describe_tool returns). " +
				"The result is the tool's own result."},
		run: func(ctx context.Context, c *providers.Call, in CallToolInput) (any, error) {
			s, err := scopeOf(ctx, r, c)
			if err != nil {
				return nil, err
			}
			args := json.RawMessage("{}")
			if in.Arguments != nil {
				if args, err = json.Marshal(in.Arguments); err != nil {
					return nil, switchboard.Invalid("arguments", "must be a JSON object")
				}
			}
			return s.CallTool(ctx, in.Name, args, c.Confirmed)
		},
	}
}

// NotInScope is the error for a name that is none of the endpoint's tools, whichever
// scope the search tools act in.
func NotInScope(name string) error {
	return switchboard.Invalid("name", fmt.Sprintf("%q is not a tool of this endpoint; find one with %s", name, providers.SearchToolName))
}

// scopeOf returns the scope the call searches: its surface's, else the caller's tools
// as the router binds them.
func scopeOf(ctx context.Context, r Router, c *providers.Call) (providers.ToolScope, error) {
	if s, ok := providers.ToolScopeFrom(ctx); ok {
		return s, nil
	}
	if r == nil {
		return nil, switchboard.Internal(fmt.Errorf("tool search has no router"))
	}
	bindings, err := r.Tools(ctx, c.Principal)
	if err != nil {
		return nil, err
	}
	return boundScope{r: r, p: c.Principal, bindings: bindings}, nil
}

// boundScope is the caller's tools as the router binds them, listed in full.
type boundScope struct {
	r        Router
	p        switchboard.Principal
	bindings []router.Binding
}

// searchable reports whether a binding is found by search: tool search's own are not.
func searchable(b router.Binding) bool {
	_, own := b.Tool.Op.(providers.ScopeSearcher)
	return !own
}

func (s boundScope) find(name string) (router.Binding, bool) {
	for _, b := range s.bindings {
		if b.Tool.Name == name && searchable(b) {
			return b, true
		}
	}
	return router.Binding{}, false
}

func (s boundScope) SearchTools(query string, limit int) []providers.ScopedTool {
	entries := make([]providers.SearchEntry, 0, len(s.bindings))
	byName := make(map[string]*providers.Tool, len(s.bindings))
	for _, b := range s.bindings {
		if !searchable(b) {
			continue
		}
		input, _ := b.Tool.Listed()
		entries = append(entries, providers.SearchEntry{Name: b.Tool.Name, Title: b.Tool.Info.Title, Description: b.Tool.Info.Description, Input: input})
		byName[b.Tool.Name] = b.Tool
	}
	hits := providers.NewSearchIndex(entries).Search(query, limit)
	out := make([]providers.ScopedTool, 0, len(hits))
	for _, h := range hits {
		t := byName[h.Name]
		out = append(out, providers.ScopedTool{Name: h.Name, Title: t.Info.Title, Description: t.Info.Description, Score: h.Score})
	}
	return out
}

// boundDefinition is a tool's definition as describe_tool answers it without a surface
// of its own: its schemas in full, its annotations as MCP names them, and the accounts
// it may run as.
type boundDefinition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  map[string]bool `json:"annotations"`
	Connections  []string        `json:"connections,omitempty"`
}

func (s boundScope) DescribeTool(name string) (any, bool) {
	b, ok := s.find(name)
	if !ok {
		return nil, false
	}
	d := boundDefinition{Name: b.Tool.Name, Title: b.Tool.Info.Title, Description: b.Tool.Info.Description,
		InputSchema: b.Tool.InputSchema, OutputSchema: b.Tool.OutputSchema, Annotations: annotations(b.Tool.Info.Hints)}
	for _, c := range b.Connections {
		d.Connections = append(d.Connections, c.Label)
	}
	return d, true
}

// CallTool runs the named tool through the router, on the account its arguments name
// ("connection", by label or id, taken out of them unless the tool takes such an
// argument itself), else on the caller's only one.
func (s boundScope) CallTool(ctx context.Context, name string, args json.RawMessage, confirmed bool) (any, error) {
	b, ok := s.find(name)
	if !ok {
		return nil, NotInScope(name)
	}
	var named string
	if !b.Tool.TakesArgument(providers.ConnectionArgument) {
		var m map[string]json.RawMessage
		if json.Unmarshal(args, &m) == nil && m[providers.ConnectionArgument] != nil {
			if err := json.Unmarshal(m[providers.ConnectionArgument], &named); err != nil {
				return nil, switchboard.Invalid("arguments.connection", "must be the label or id of one of your accounts")
			}
			delete(m, providers.ConnectionArgument)
			var err error
			if args, err = json.Marshal(m); err != nil {
				return nil, switchboard.Internal(err)
			}
		}
	}
	var conn string
	switch {
	case len(b.Connections) == 0:
	case named != "":
		id, err := router.PickConnection(b.Connections, "arguments.connection", named)
		if err != nil {
			return nil, err
		}
		conn = id
	case len(b.Connections) == 1:
		conn = b.Connections[0].ID
	default:
		labels := make([]string, len(b.Connections))
		for i, c := range b.Connections {
			labels[i] = fmt.Sprintf("%q", c.Label)
		}
		return nil, switchboard.Invalid("arguments.connection", "is required: you have several accounts this tool can run on ("+strings.Join(labels, ", ")+")")
	}
	return s.r.Execute(ctx, s.p, router.Request{Tool: name, ConnectionID: conn, Args: args, Confirmed: confirmed})
}

// annotations are an operation's hints as MCP's tool annotations name them.
func annotations(h providers.Hints) map[string]bool {
	return map[string]bool{"readOnlyHint": h.ReadOnly, "destructiveHint": h.Destructive, "idempotentHint": h.Idempotent || h.ReadOnly, "openWorldHint": !h.ClosedWorld}
}
