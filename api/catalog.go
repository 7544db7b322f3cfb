package api

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
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
	// OpenAPI marks one of the tenant's own APIs, added by its OpenAPI description.
	OpenAPI bool `json:"openapi,omitempty"`
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
		if sp.PerConnection() {
			continue // its connections bring their tools, and are registered through its own routes
		}
		kinds := sp.AuthKinds
		if kinds == nil {
			kinds = []providers.AuthKind{}
		}
		out = append(out, providerView{
			Name: sp.Name, Title: sp.Title, Description: sp.Description, AuthKinds: kinds, OAuthReady: ready[sp.Name],
			Scopes: s.providerScopes(sp.Name), TokenHelp: sp.TokenHelp, DocsURL: sp.DocsURL, Operations: len(s.Registry.Tools(sp.Name)),
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
	c.JSON(http.StatusOK, gin.H{"providers": out})
}

func (s *server) listOperations(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	name := c.Param("provider")
	var tools []*providers.Tool
	if spec, ok := s.Registry.Provider(name); ok && !spec.PerConnection() {
		tools = s.Registry.Tools(name)
	} else if own, err := s.tenantAPI(c, p, name); err != nil || !own { // a per-connection provider's tools are each connection's
		if err == nil {
			err = switchboard.NotFound("provider " + name)
		}
		s.fail(c, err)
		return
	} else if tools, err = s.OpenAPI.Tools(c.Request.Context(), p, name); err != nil {
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
