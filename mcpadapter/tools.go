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

// buildTool turns a binding into an MCP tool: the registry's schemas (plus a connection
// argument listing the caller's accounts when there are several), annotations from the
// operation's hints, and a handler that runs the call through the router.
func (a *Adapter) buildTool(b router.Binding) (server.ServerTool, error) {
	info := b.Tool.Info
	input := b.Tool.InputSchema
	labels := make(map[string]string, len(b.Connections))
	for _, c := range b.Connections {
		labels[c.Label] = c.ID
	}
	description := info.Description
	if len(b.Connections) > 1 {
		var err error
		if input, err = withConnectionArg(input, b); err != nil {
			return server.ServerTool{}, fmt.Errorf("tool %s: %w", b.Tool.Name, err)
		}
	} else {
		description += fmt.Sprintf(" (Runs as %s account %q.)", b.Tool.Provider.Title, b.Connections[0].Label)
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
	single := ""
	if len(b.Connections) == 1 {
		single = b.Connections[0].ID
	}
	handler := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, ok := switchboard.PrincipalFrom(ctx)
		if !ok {
			return nil, fmt.Errorf("no principal in context")
		}
		args, err := rawArguments(req)
		if err != nil {
			return a.toolError(switchboard.Invalid("arguments", err.Error())), nil
		}
		connID := single
		if connID == "" {
			if args, connID, err = takeConnection(args, labels); err != nil {
				return a.toolError(err), nil
			}
		}
		out, err := a.opts.Router.Execute(ctx, p, router.Request{Tool: name, ConnectionID: connID, Args: args})
		if err != nil {
			return a.toolError(err), nil
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
