package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
)

// connectionArg is the argument a tool takes when the caller has several connections
// of its provider.
const connectionArg = "connection"

// hubTool is one of the registry's tools as a scope serves it: the binding (the
// connections it may run on) and how a call's arguments pick the connection.
type hubTool struct {
	binding router.Binding
	labels  map[string]string // label -> connection id, when the tool takes a connection argument
	single  string            // the connection id, when there is only one
}

// request turns a call's arguments into the router request, taking the connection
// argument off when the tool has one.
func (t *hubTool) request(args json.RawMessage) (router.Request, error) {
	connID := t.single
	if connID == "" {
		var err error
		if args, connID, err = takeConnection(args, t.labels); err != nil {
			return router.Request{}, err
		}
	}
	return router.Request{Tool: t.binding.Tool.Name, ConnectionID: connID, Args: args}, nil
}

// needsReconnect lists the labels of the tool's connections that need reconnecting.
func (t *hubTool) needsReconnect() []string {
	var out []string
	for _, c := range t.binding.Connections {
		if c.NeedsReconnect {
			out = append(out, c.Label)
		}
	}
	return out
}

func newHubTool(b router.Binding) *hubTool {
	t := &hubTool{binding: b}
	if len(b.Connections) == 1 {
		t.single = b.Connections[0].ID
		return t
	}
	t.labels = make(map[string]string, len(b.Connections))
	for _, c := range b.Connections {
		t.labels[c.Label] = c.ID
	}
	return t
}

// buildTool turns a binding into an MCP tool: the registry's schemas (plus a connection
// argument listing the caller's accounts when there are several), annotations from the
// operation's hints, and a handler that runs the call through the router. A tool whose
// connection needs reconnecting stays listed, marked [NEEDS RECONNECT].
func (a *Adapter) buildTool(t *hubTool) (server.ServerTool, error) {
	b := t.binding
	info := b.Tool.Info
	input := b.Tool.InputSchema
	description := info.Description
	if len(b.Connections) > 1 {
		var err error
		if input, err = withConnectionArg(input, b); err != nil {
			return server.ServerTool{}, fmt.Errorf("tool %s: %w", b.Tool.Name, err)
		}
	} else {
		description += fmt.Sprintf(" (Runs as %s account %q.)", b.Tool.Provider.Title, b.Connections[0].Label)
	}
	if stale := t.needsReconnect(); len(stale) > 0 {
		quoted := make([]string, len(stale))
		for i, l := range stale {
			quoted[i] = fmt.Sprintf("%q", l)
		}
		description = fmt.Sprintf("%s The %s account %s needs reconnecting at %s before this tool works. %s",
			NeedsReconnectMark, b.Tool.Provider.Title, strings.Join(quoted, ", "), a.reconnectURL(), description)
	}
	h := info.Hints
	tool := mcp.Tool{
		Name:            b.Tool.Name,
		Title:           info.Title,
		Description:     description,
		RawInputSchema:  input,
		RawOutputSchema: b.Tool.OutputSchema,
		Annotations: mcp.ToolAnnotation{
			Title:           info.Title,
			ReadOnlyHint:    mcp.ToBoolPtr(h.ReadOnly),
			DestructiveHint: mcp.ToBoolPtr(h.Destructive),
			IdempotentHint:  mcp.ToBoolPtr(h.Idempotent || h.ReadOnly),
			OpenWorldHint:   mcp.ToBoolPtr(!h.ClosedWorld),
		},
	}
	name := b.Tool.Name
	handler := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, fmt.Errorf("no principal in context")
		}
		args, err := rawArguments(req)
		if err != nil {
			return a.toolError(switchboard.Invalid("arguments", err.Error())), nil
		}
		rreq, err := t.request(args)
		if err != nil {
			return a.toolError(err), nil
		}
		out, err := a.opts.Router.Execute(ctx, p, rreq)
		if err != nil {
			return a.toolError(err), nil
		}
		if res, ok := out.(*mcp.CallToolResult); ok {
			return res, nil // a remote MCP server's result, as the server gave it
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode %s output: %w", name, err)
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(string(raw))},
			StructuredContent: json.RawMessage(raw),
		}, nil
	}
	return server.ServerTool{Tool: tool, Handler: handler}, nil
}

// NeedsReconnectMark starts the description of a tool whose connection needs
// reconnecting.
const NeedsReconnectMark = "[NEEDS RECONNECT]"

// withConnectionArg adds the required connection argument, an enum of the labels.
func withConnectionArg(input json.RawMessage, b router.Binding) (json.RawMessage, error) {
	var schema map[string]any
	if err := json.Unmarshal(input, &schema); err != nil {
		return nil, err
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, clash := props[connectionArg]; clash {
		return nil, fmt.Errorf("the operation already has an argument named %q", connectionArg)
	}
	enum := make([]any, 0, len(b.Connections))
	for _, c := range b.Connections {
		enum = append(enum, c.Label)
	}
	props[connectionArg] = map[string]any{
		"type":        "string",
		"enum":        enum,
		"description": fmt.Sprintf("Which connected %s account to use, by its label", b.Tool.Provider.Title),
	}
	schema["properties"] = props
	req, _ := schema["required"].([]any)
	schema["required"] = append([]any{connectionArg}, req...)
	return json.Marshal(schema)
}

// rawArguments returns the call's arguments as JSON, as the client sent them.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if req.Params.Arguments == nil {
		return json.RawMessage("{}"), nil
	}
	return json.Marshal(req.Params.Arguments)
}

// takeConnection removes the connection argument and resolves its label.
func takeConnection(args json.RawMessage, labels map[string]string) (json.RawMessage, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, "", switchboard.Invalid("arguments", "must be a JSON object")
	}
	known := make([]string, 0, len(labels))
	for l := range labels {
		known = append(known, fmt.Sprintf("%q", l))
	}
	raw, ok := m[connectionArg]
	if !ok {
		return nil, "", switchboard.Invalid(connectionArg, "is required; one of "+strings.Join(known, ", "))
	}
	var label string
	if err := json.Unmarshal(raw, &label); err != nil {
		return nil, "", switchboard.Invalid(connectionArg, "must be a string")
	}
	id, ok := labels[label]
	if !ok {
		return nil, "", switchboard.Invalid(connectionArg, "must be one of "+strings.Join(known, ", "))
	}
	delete(m, connectionArg)
	rest, err := json.Marshal(m)
	return rest, id, err
}
