package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/mcptransport"
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

// A resources/read of a URI the scope has no resource for is refused with the code of
// the request's era, -32602 (invalid params) on 2026-07-28 and -32002 (resource not
// found) before it, and names the URI in data.uri (SEP-2164), whichever refused it:
// mcp-go, for a URI no resource or template matches, or a handler, for one a template
// matches but that does not exist (another tenant's connection, a remote server's
// unknown resource). mcp-go gives neither a handler's refusal its code nor any data,
// so the adapter keeps the answer (resourceAnswer) and writes the refusal itself.

// notFoundMark is the context key of the mark a resource handler's not-found refusal
// leaves for resourceAnswer.
type notFoundMark struct{}

// markNotFound is the scope's resource middleware: a handler's not-found refusal marks
// the request's answer as one.
func markNotFound(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		contents, err := next(ctx, req)
		if err != nil && switchboard.CodeOf(err) == switchboard.CodeNotFound {
			if m, ok := ctx.Value(notFoundMark{}).(*bool); ok {
				*m = true
			}
		}
		return contents, err
	}
}

// unmatchedResource is how mcp-go words its refusal of a URI that no resource or
// template of the server matches.
const unmatchedResource = "handler not found for resource URI"

// resourceAnswer keeps the answer to a resources/read (one JSON-RPC message) so a
// not-found refusal can be written as SEP-2164 asks; any other answer is passed on as
// it came.
type resourceAnswer struct {
	*mcptransport.BufferWriter
	w        http.ResponseWriter
	uri      string
	modern   bool
	notFound bool
}

// readingResource returns the writer and the request a resources/read is served
// with, and the func that writes its answer when it is done.
func readingResource(w http.ResponseWriter, r *http.Request, msg mcptransport.Message) (http.ResponseWriter, *http.Request, func()) {
	var params struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(msg.RawParams, &params)
	ra := &resourceAnswer{BufferWriter: mcptransport.NewBufferWriter(), w: w, uri: params.URI,
		modern: mcp.IsModernProtocol(msg.Params.Meta.ProtocolVersion())}
	return ra, r.WithContext(context.WithValue(r.Context(), notFoundMark{}, &ra.notFound)), ra.finish
}

// Flush keeps the answer until it is whole (finish writes it).
func (ra *resourceAnswer) Flush() {}

func (ra *resourceAnswer) finish() {
	if ra.Status == 0 {
		return // silenced (cancelled): nothing to write
	}
	if out, ok := ra.notFoundAnswer(); ok {
		ra.w.Header().Set("Content-Type", "application/json")
		status := http.StatusOK
		if ra.modern {
			status = http.StatusBadRequest // as 2026-07-28 answers invalid params
		}
		ra.w.WriteHeader(status)
		_, _ = ra.w.Write(out)
		return
	}
	ra.CopyTo(ra.w)
}

// notFoundAnswer returns the answer as a not-found refusal naming the URI, when it is
// one.
func (ra *resourceAnswer) notFoundAnswer() ([]byte, bool) {
	if ra.uri == "" || !strings.HasPrefix(ra.Header().Get("Content-Type"), "application/json") {
		return nil, false
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(ra.Body.Bytes(), &msg) != nil || msg.Error == nil {
		return nil, false
	}
	unmatched := (msg.Error.Code == mcp.INVALID_PARAMS || msg.Error.Code == mcp.RESOURCE_NOT_FOUND) &&
		strings.HasPrefix(msg.Error.Message, unmatchedResource)
	if !unmatched && !ra.notFound {
		return nil, false
	}
	code := mcp.RESOURCE_NOT_FOUND
	if ra.modern {
		code = mcp.INVALID_PARAMS
	}
	out, err := json.Marshal(map[string]any{"jsonrpc": msg.JSONRPC, "id": msg.ID, "error": map[string]any{
		"code": code, "message": "resource " + ra.uri + " not found", "data": map[string]any{"uri": ra.uri}}})
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}
