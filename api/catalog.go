package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// providerView is one provider of the catalog.
type providerView struct {
	Name        string               `json:"name"`
	Title       string               `json:"title"`
	Description string               `json:"description"`
	AuthKinds   []providers.AuthKind `json:"auth_kinds"`
	// OAuthReady says an OAuth app is configured for the caller's tenant (its own or
	// the deployment's), so "Continue with OAuth" can work.
	OAuthReady bool `json:"oauth_ready"`
	// Scopes are the scopes the provider's tools need, all of them, once each.
	Scopes     []string `json:"scopes"`
	TokenHelp  string   `json:"token_help,omitempty"`
	DocsURL    string   `json:"docs_url,omitempty"`
	Operations int      `json:"operations"`
	// Catalog marks an API of the built-in catalog (a public description and a preset,
	// with a curated default tool set); Logo is its icon as an SVG data URL.
	Catalog bool   `json:"catalog,omitempty"`
	Logo    string `json:"logo,omitempty"`
	// OpenAPI marks one of the tenant's own APIs, added by its OpenAPI description.
	OpenAPI bool `json:"openapi,omitempty"`
	// Remote marks a remote MCP server the caller may use: its tools, named after it,
	// are its operations. It is connected already (it is a connection), so it has no
	// auth kinds.
	Remote bool `json:"remote,omitempty"`
	// Connectionless marks the hub's own tools that an agent is given by picking them
	// (the workflows' management, the tenant's saved workflows): they run as the caller,
	// on no connection, so nothing is connected first.
	Connectionless bool `json:"connectionless,omitempty"`
	// Ambient marks the tools every caller has, an agent included without picking them
	// (the run tools): the builder does not offer them; Try it runs them.
	Ambient bool `json:"ambient,omitempty"`
}

// operationView is one operation of a provider: its tool name and the same schema bytes
// the MCP tools/list serves.
type operationView struct {
	Tool         string          `json:"tool"`
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	DocsURL      string          `json:"docs_url,omitempty"`
	Scopes       []string        `json:"scopes"`
	Annotations  annotations     `json:"annotations"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema"`
}

// operationsOf returns the tools of a catalog entry: a registered provider's
// operations, the tools of one of the tenant's APIs, or those of a remote MCP server
// the caller may use. A per-connection provider's own name is no entry: its tools are
// each connection's.
func (s *server) operationsOf(c *gin.Context, p switchboard.Principal, name string) ([]*providers.Tool, error) {
	if spec, ok := s.Registry.Provider(name); ok {
		if spec.PerConnection() {
			return nil, switchboard.NotFound("provider " + name)
		}
		if spec.TenantTools != nil { // the tenant's saved workflows
			return spec.TenantTools(c.Request.Context(), p.TenantID)
		}
		return s.Registry.Tools(name), nil
	}
	if err := s.Registry.LoadError(name); err != nil { // an operator's description that did not load
		return nil, &switchboard.Error{Code: switchboard.CodeUnavailable, Message: err.Error(), Err: err}
	}
	own, err := s.tenantAPI(c, p, name)
	if err != nil {
		return nil, err
	}
	if own {
		return s.OpenAPI.Tools(c.Request.Context(), p, name)
	}
	servers, err := s.remoteServers(c.Request.Context(), p)
	if err != nil {
		return nil, err
	}
	for _, sv := range servers {
		if sv.name == name {
			return sv.tools, nil
		}
	}
	return nil, switchboard.NotFound("provider " + name)
}

// annotations are the MCP tool annotations the operation's hints become.
type annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

func (s *server) listProviders(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ready, err := s.Connections.OAuthReady(c.Request.Context(), p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	specs := s.Registry.Providers()
	out := make([]providerView, 0, len(specs))
	for _, sp := range specs {
		if sp.Connectionless {
			ops, err := s.operationsOf(c, p, sp.Name)
			if err != nil {
				s.fail(c, err)
				return
			}
			out = append(out, providerView{Name: sp.Name, Title: sp.Title, Description: sp.Description, AuthKinds: []providers.AuthKind{},
				Scopes: []string{}, Operations: len(ops), Connectionless: true, Ambient: sp.Ambient})
			continue
		}
		if !sp.Connectable() {
			continue // its connections are registered through its own routes, or every caller has its tools
		}
		kinds := sp.AuthKinds
		if kinds == nil {
			kinds = []providers.AuthKind{}
		}
		out = append(out, providerView{
			Name: sp.Name, Title: sp.Title, Description: sp.Description, AuthKinds: kinds, OAuthReady: ready[sp.Name],
			Scopes: s.providerScopes(sp.Name), TokenHelp: sp.TokenHelp, DocsURL: sp.DocsURL, Operations: len(s.Registry.Tools(sp.Name)),
			Catalog: sp.Catalog, Logo: logoURL(sp.Logo),
		})
	}
	if s.OpenAPI != nil { // the tenant's own APIs, added by their OpenAPI description
		apis, err := s.OpenAPI.List(c.Request.Context(), p)
		if err != nil {
			s.fail(c, err)
			return
		}
		for _, a := range apis {
			out = append(out, providerView{Name: a.Name, Title: a.Title, Description: a.Description, AuthKinds: a.AuthKinds,
				OAuthReady: slices.Contains(a.AuthKinds, providers.AuthOAuth2), // its own OAuth app, given with it
				Scopes:     []string{}, TokenHelp: a.TokenHelp, DocsURL: a.DocsURL, Operations: len(a.Tools), OpenAPI: true})
		}
	}
	servers, err := s.remoteServers(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	listed := make(map[string]bool, len(out))
	for _, v := range out {
		listed[v.Name] = true
	}
	for _, sv := range servers {
		if listed[sv.name] {
			continue // a name its tools cannot be told apart by; they stay under /api/tools
		}
		out = append(out, providerView{Name: sv.name, Title: sv.name, Description: fmt.Sprintf("The remote MCP server %s.", sv.name),
			AuthKinds: []providers.AuthKind{}, Scopes: []string{}, Operations: len(sv.tools), Remote: true})
	}
	c.JSON(http.StatusOK, gin.H{"providers": out})
}

// remoteServer is a remote MCP server the caller may use, with its tools.
type remoteServer struct {
	name  string
	tools []*providers.Tool
}

// remoteServers lists the remote MCP servers whose tools the caller may call, each
// with those tools, as the router lists them (a server whose tools cannot be listed
// now has none, and is left out). A server's name is its connection's account label,
// the prefix of its tools' names.
func (s *server) remoteServers(ctx context.Context, p switchboard.Principal) ([]remoteServer, error) {
	if s.RemoteMCP == nil || s.Tools == nil {
		return nil, nil
	}
	bindings, err := s.Tools.Tools(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []remoteServer
	at := map[string]int{} // connection id -> index in out
	for _, b := range bindings {
		if b.Tool.Provider.Name != remotemcp.Provider || len(b.Connections) != 1 {
			continue
		}
		ref := b.Connections[0]
		i, ok := at[ref.ID]
		if !ok {
			i = len(out)
			at[ref.ID] = i
			out = append(out, remoteServer{name: ref.Account})
		}
		out[i].tools = append(out[i].tools, b.Tool)
	}
	return out, nil
}

func (s *server) listOperations(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	name := c.Param("provider")
	tools, err := s.operationsOf(c, p, name)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]operationView, 0, len(tools))
	for _, t := range tools {
		scopes := t.Info.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		out = append(out, operationView{
			Tool: t.Name, Name: t.Info.Name, Title: t.Info.Title, Description: t.Info.Description,
			DocsURL: t.Info.DocsURL, Scopes: scopes,
			Annotations: annotations{
				ReadOnlyHint:    t.Info.Hints.ReadOnly,
				DestructiveHint: t.Info.Hints.Destructive,
				IdempotentHint:  t.Info.Hints.Idempotent || t.Info.Hints.ReadOnly,
				OpenWorldHint:   !t.Info.Hints.ClosedWorld,
			},
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
		})
	}
	c.JSON(http.StatusOK, gin.H{"provider": name, "operations": out})
}

// logoURL is an SVG document as a data URL, or "" for none.
func logoURL(svg string) string {
	if svg == "" {
		return ""
	}
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))
}
