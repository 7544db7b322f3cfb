package mcpadapter

import (
	"context"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
)

// RemoteContent supplies the prompts and resources of remote MCP servers, each by the
// connection it is reached through (remotemcp.Service).
type RemoteContent interface {
	// Content lists the server's prompts, resources and resource templates under the
	// hub's names and URIs.
	Content(ctx context.Context, tenant switchboard.TenantID, connection string) (remotemcp.Content, error)
	// GetPrompt gets a prompt by its hub name.
	GetPrompt(ctx context.Context, tenant switchboard.TenantID, connection, name string, args map[string]string) (*mcp.GetPromptResult, error)
	// ReadResource reads a resource by its hub URI.
	ReadResource(ctx context.Context, tenant switchboard.TenantID, connection, uri string) ([]mcp.ResourceContents, error)
}

// remoteState is what a scope serves of its remote servers beside their tools.
type remoteState struct {
	servers   map[string]string // server name -> connection id
	prompts   map[string]string // hub prompt name -> connection id
	listed    []server.ServerPrompt
	resources []server.ServerResource
	templates []server.ServerResourceTemplate
	digest    []string // for the scope's fingerprint
}

// remoteConnections lists the remote MCP connections whose prompts and resources the
// scope serves, with the visibility of their tools: at an agent URL, those the agent
// selected a tool on (bindings, already the agent's); elsewhere, those the principal
// may use (Router.Connections), a server without tools included.
func (s *scope) remoteConnections(ctx context.Context, bindings []router.Binding) ([]string, error) {
	if s.agentID == "" {
		return s.adapter.opts.Router.Connections(ctx, s.principal, remotemcp.Provider)
	}
	var out []string
	for _, b := range bindings {
		if b.Tool.Provider == nil || b.Tool.Provider.Name != remotemcp.Provider {
			continue
		}
		for _, c := range b.Connections {
			if !slices.Contains(out, c.ID) {
				out = append(out, c.ID)
			}
		}
	}
	return out, nil
}

// remoteContent reads the prompts and resources of the scope's remote servers. A
// server that cannot list them now is left out and logged, as its tools would be. Each
// server also gets a template for any of its resources by their URI on the server, so
// a resource_link its tools return is readable even when it is not listed (when it
// announced resources).
func (s *scope) remoteContent(ctx context.Context, bindings []router.Binding) (remoteState, error) {
	rs := remoteState{servers: map[string]string{}, prompts: map[string]string{}}
	remote := s.adapter.opts.Remote
	if remote == nil {
		return rs, nil
	}
	ids, err := s.remoteConnections(ctx, bindings)
	if err != nil {
		return rs, err
	}
	for _, id := range ids {
		c, err := remote.Content(ctx, s.principal.TenantID, id)
		if err != nil {
			s.adapter.opts.Logger.WarnContext(ctx, "list the prompts and resources of a remote MCP server", "connection", id, "err", err)
			continue
		}
		if _, dup := rs.servers[c.Server]; dup {
			continue
		}
		rs.servers[c.Server] = id
		for _, p := range c.Prompts {
			if p.Name == useToolPrompt || p.Name == instructionsPrompt {
				continue // the hub's own prompts keep their names
			}
			if _, dup := rs.prompts[p.Name]; dup {
				continue
			}
			rs.prompts[p.Name] = id
			rs.listed = append(rs.listed, server.ServerPrompt{Prompt: p, Handler: s.remotePrompt})
			rs.digest = append(rs.digest, "rprompt:"+jsonDigest(p))
		}
		for _, r := range c.Listed {
			rs.resources = append(rs.resources, server.ServerResource{Resource: r, Handler: s.readRemote})
			rs.digest = append(rs.digest, "rres:"+jsonDigest(r))
		}
		for _, t := range c.Templates {
			rs.templates = append(rs.templates, server.ServerResourceTemplate{Template: t, Handler: s.readRemote})
			rs.digest = append(rs.digest, "rtpl:"+jsonDigest(t))
		}
		if c.Resources {
			anyURI := mcp.NewResourceTemplate(remotemcp.HubURI(c.Server, "{+uri}"), c.Server+" resource",
				mcp.WithTemplateDescription("Any resource of the remote MCP server "+c.Server+", by its URI on that server: the resource links its tools return are such URIs."))
			rs.templates = append(rs.templates, server.ServerResourceTemplate{Template: anyURI, Handler: s.readRemote})
		}
		rs.digest = append(rs.digest, "rsrv:"+c.Server+"="+id)
	}
	return rs, nil
}

// remotePrompt gets a remote server's prompt through its connection.
func (s *scope) remotePrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id, ok := s.state.Load().remote.prompts[req.Params.Name]
	if !ok || s.adapter.opts.Remote == nil {
		return nil, switchboard.NotFound("prompt " + req.Params.Name)
	}
	return s.adapter.opts.Remote.GetPrompt(ctx, s.principal.TenantID, id, req.Params.Name, req.Params.Arguments)
}

// readRemote reads a remote server's resource through its connection: only a server
// the scope lists; any other URI is not found.
func (s *scope) readRemote(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	srv, _, ok := remotemcp.SplitHubURI(req.Params.URI)
	id := s.state.Load().remote.servers[srv]
	if !ok || id == "" || s.adapter.opts.Remote == nil {
		return nil, switchboard.NotFound("resource " + req.Params.URI)
	}
	return s.adapter.opts.Remote.ReadResource(ctx, s.principal.TenantID, id, req.Params.URI)
}
