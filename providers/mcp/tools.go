package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/providers"
)

// remoteOp is a remote server's tool as a providers.Op: its invocation calls the tool
// on the connection's session.
type remoteOp struct {
	svc    *Service
	info   providers.Info
	remote string // the tool's name on the server
}

var _ providers.Op = (*remoteOp)(nil)

// Info returns the tool's description.
func (o *remoteOp) Info() providers.Info { return o.info }

// InputSchema is not reflected: a remote tool's schema is the server's (Tool.InputSchema).
func (o *remoteOp) InputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("a remote MCP tool has no reflected schema")
}

// OutputSchema is not reflected either.
func (o *remoteOp) OutputSchema() (*jsonschema.Schema, error) {
	return nil, errors.New("a remote MCP tool has no reflected schema")
}

// Invoke takes the connection's rate limit (the session's requests do not go through
// c.HTTP), calls the tool on the connection's session and returns the server's result
// (*providers.ContentResult) as it is.
func (o *remoteOp) Invoke(ctx context.Context, c *providers.Call, args json.RawMessage) (any, error) {
	if err := c.Wait(ctx); err != nil {
		return nil, err
	}
	out, err := o.svc.callTool(ctx, c.Tenant, c.ConnectionID, o.remote, args)
	if wait, limited := rateLimited(err); limited {
		c.Block(ctx, wait) // the next calls are refused here until then, as for built-in providers
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// defaultRateLimitWait is how long a connection is blocked after the server's 429
// without a usable Retry-After.
const defaultRateLimitWait = 30 * time.Second

// rateLimited reports whether err is the server's 429, and how long to leave it alone:
// its Retry-After, or defaultRateLimitWait.
func rateLimited(err error) (time.Duration, bool) {
	var ue *providers.UpstreamError
	if !errors.As(err, &ue) || ue.Provider != Provider || ue.Status != http.StatusTooManyRequests {
		return 0, false
	}
	if ue.RetryAfter > 0 {
		return ue.RetryAfter, true
	}
	return defaultRateLimitWait, true
}

// hubTools turns a server's tools into the hub's: named server_tool, with the server's
// schemas and annotations. Tools whose names collide once normalised keep the first;
// a tool whose name is one of the hub's (a server "search" with a tool "tools" would
// name search_tools, the hub's own; see providers.Registry.ReservedToolName), or whose
// schema does not compile, is left out. remote maps hub names to the server's.
func (s *Service) hubTools(server string, tools []mcpgo.Tool) ([]*providers.Tool, map[string]string) {
	out := make([]*providers.Tool, 0, len(tools))
	remote := make(map[string]string, len(tools))
	for _, t := range tools {
		name := toolName(server, t.Name)
		if _, dup := remote[name]; dup {
			s.log.Warn("remote MCP tool name collides once normalised; keeping the first", "server", server, "tool", t.Name, "as", name)
			continue
		}
		if s.reg.ReservedToolName(name) {
			s.log.Warn("remote MCP tool named like a tool of the hub's; left out", "server", server, "tool", t.Name, "as", name)
			continue
		}
		in, err := schemaJSON(t.RawInputSchema, t.InputSchema)
		if err != nil {
			s.log.Warn("remote MCP tool input schema", "server", server, "tool", t.Name, "err", err)
			continue
		}
		var outSchema json.RawMessage
		if t.RawOutputSchema != nil || t.OutputSchema.Type != "" {
			if outSchema, err = schemaJSON(t.RawOutputSchema, mcpgo.ToolInputSchema(t.OutputSchema)); err != nil {
				s.log.Warn("remote MCP tool output schema", "server", server, "tool", t.Name, "err", err)
				continue
			}
		}
		op := &remoteOp{svc: s, remote: t.Name, info: toolInfo(server, t)}
		ht, err := providers.NewConnectionTool(s.spec, name, op, in, outSchema)
		if err != nil {
			s.log.Warn("remote MCP tool", "server", server, "tool", t.Name, "err", err)
			continue
		}
		remote[name] = t.Name
		out = append(out, ht)
	}
	return out, remote
}

// schemaJSON is a tool's schema as JSON: the raw one when the server's was kept raw.
func schemaJSON(raw json.RawMessage, parsed mcpgo.ToolInputSchema) (json.RawMessage, error) {
	if raw != nil {
		return raw, nil
	}
	if parsed.Type == "" {
		parsed.Type = "object"
	}
	return json.Marshal(parsed)
}

// toolInfo is a remote tool's description and hints, with the MCP defaults for
// missing annotations (destructive, open world).
func toolInfo(server string, t mcpgo.Tool) providers.Info {
	a := t.Annotations
	title := t.Title
	if title == "" {
		title = a.Title
	}
	if title == "" {
		title = t.Name
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the remote MCP server %s.", t.Name, server)
	}
	return providers.Info{
		Name:        t.Name,
		Title:       title,
		Description: desc,
		Hints: providers.Hints{
			ReadOnly:    boolOr(a.ReadOnlyHint, false),
			Destructive: boolOr(a.DestructiveHint, true),
			Idempotent:  boolOr(a.IdempotentHint, false),
			ClosedWorld: !boolOr(a.OpenWorldHint, true),
		},
	}
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// sameTools reports whether two tool lists are the same to a client.
func sameTools(a, b []*providers.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || string(a[i].InputSchema) != string(b[i].InputSchema) ||
			string(a[i].OutputSchema) != string(b[i].OutputSchema) || a[i].Info.Title != b[i].Info.Title ||
			a[i].Info.Description != b[i].Info.Description || a[i].Info.Hints != b[i].Info.Hints {
			return false
		}
	}
	return true
}
