package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
)

// The scope's own resources: its connections, and one connection by ID.
const (
	connectionsURI      = "switchboard://connections"
	connectionsTemplate = "switchboard://connections/{connection}"
)

// connectionResource is one connection as the resources show it: never a credential.
type connectionResource struct {
	ID             string   `json:"id"`
	Provider       string   `json:"provider"`
	Label          string   `json:"label"`
	NeedsReconnect bool     `json:"needs_reconnect"`
	ReconnectURL   string   `json:"reconnect_url,omitempty"`
	Tools          []string `json:"tools"`
}

// connectionsOf lists the connections the scope's tools run on, in tool order.
func (s *scope) connectionsOf(st *scopeState) []connectionResource {
	var out []connectionResource
	index := map[string]int{}
	for _, name := range st.order {
		t := st.hub[name]
		for _, c := range t.binding.Connections {
			i, ok := index[c.ID]
			if !ok {
				i = len(out)
				index[c.ID] = i
				cr := connectionResource{ID: c.ID, Provider: t.binding.Tool.Provider.Name, Label: c.Label, NeedsReconnect: c.NeedsReconnect, Tools: []string{}}
				if c.NeedsReconnect {
					cr.ReconnectURL = s.adapter.reconnectURL()
				}
				out = append(out, cr)
			}
			out[i].Tools = append(out[i].Tools, name)
		}
	}
	return out
}

// resources returns the scope's own fixed resources.
func (s *scope) resources() []server.ServerResource {
	r := mcp.NewResource(connectionsURI, "connections",
		mcp.WithResourceDescription("The connected accounts this endpoint's tools run on: provider, label, whether it needs reconnecting, and its tools. Never credentials."),
		mcp.WithMIMEType("application/json"))
	return []server.ServerResource{{Resource: r, Handler: s.readConnections}}
}

// resourceTemplates returns the scope's own resource templates.
func (s *scope) resourceTemplates() []server.ServerResourceTemplate {
	t := mcp.NewResourceTemplate(connectionsTemplate, "connection",
		mcp.WithTemplateDescription("One connected account of this endpoint, by its ID (complete the connection argument to list them)."),
		mcp.WithTemplateMIMEType("application/json"))
	return []server.ServerResourceTemplate{{Template: t, Handler: s.readConnection}}
}

func (s *scope) readConnections(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	conns := s.connectionsOf(s.state.Load())
	if conns == nil {
		conns = []connectionResource{}
	}
	return jsonContents(req.Params.URI, map[string]any{"connections": conns})
}

func (s *scope) readConnection(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id := strings.TrimPrefix(req.Params.URI, "switchboard://connections/")
	for _, c := range s.connectionsOf(s.state.Load()) {
		if c.ID == id {
			return jsonContents(req.Params.URI, c)
		}
	}
	// Another tenant's connection, another user's private one and a missing one all
	// answer the same.
	return nil, switchboard.NotFound("resource " + req.Params.URI)
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(raw)}}, nil
}

// resourceCompleter completes the connection argument of the connection template:
// the IDs of the scope's connections whose ID or label starts with (or contains) the
// value.
type resourceCompleter struct{ s *scope }

func (c resourceCompleter) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != connectionsTemplate || arg.Name != connectionArg {
		return &mcp.Completion{Values: []string{}}, nil
	}
	p := strings.ToLower(arg.Value)
	var starts, contains []string
	for _, conn := range c.s.connectionsOf(c.s.state.Load()) {
		id, label := strings.ToLower(conn.ID), strings.ToLower(conn.Label)
		switch {
		case strings.HasPrefix(id, p) || strings.HasPrefix(label, p):
			starts = append(starts, conn.ID)
		case strings.Contains(id, p) || strings.Contains(label, p):
			contains = append(contains, conn.ID)
		}
	}
	return complete(append(starts, contains...), ""), nil
}
