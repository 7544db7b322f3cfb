package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
)

// OpenAPIProviders keeps the tenants' APIs added by their OpenAPI description
// (openapis.Service).
type OpenAPIProviders interface {
	Add(ctx context.Context, p switchboard.Principal, in openapis.AddInput) (openapis.View, error)
	List(ctx context.Context, p switchboard.Principal) ([]openapis.View, error)
	Delete(ctx context.Context, p switchboard.Principal, name string) error
	Has(ctx context.Context, p switchboard.Principal, name string) (bool, error)
	Tools(ctx context.Context, p switchboard.Principal, name string) ([]*providers.Tool, error)
	Connect(ctx context.Context, p switchboard.Principal, name string, in openapis.ConnectInput) (connections.Connection, error)
	Authorize(ctx context.Context, p switchboard.Principal, name string, shared bool, label string) (connections.Authorization, error)
}

// addOpenAPIProvider adds an API for the caller's tenant (an admin) from its OpenAPI
// description, given inline or by URL. Its connections are made like any provider's,
// with POST /api/connections naming it.
func (s *server) addOpenAPIProvider(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.OpenAPI == nil {
		s.fail(c, switchboard.Errorf(switchboard.CodeUnavailable, "adding APIs by their OpenAPI description is not enabled on this server"))
		return
	}
	var req openapis.AddInput
	if err := decodeUpTo(c, &req, openapis.MaxDescription); err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.OpenAPI.Add(c.Request.Context(), p, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

// listOpenAPIProviders lists the caller's tenant's APIs.
func (s *server) listOpenAPIProviders(c *gin.Context) {
	p, err := asUserTo(c, "read or manage the APIs added by their description")
	if err != nil {
		s.fail(c, err)
		return
	}
	out := []openapis.View{}
	if s.OpenAPI != nil {
		if out, err = s.OpenAPI.List(c.Request.Context(), p); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"providers": out})
}

// deleteOpenAPIProvider deletes one of the caller's tenant's APIs (an admin) and
// disconnects its connections.
func (s *server) deleteOpenAPIProvider(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.OpenAPI == nil {
		s.fail(c, switchboard.NotFound("API "+c.Param("name")))
		return
	}
	if err := s.OpenAPI.Delete(c.Request.Context(), p, c.Param("name")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// tenantAPI reports whether name is one of the caller's tenant's APIs, which the
// catalog and POST /api/connections take like a provider.
func (s *server) tenantAPI(c *gin.Context, p switchboard.Principal, name string) (bool, error) {
	if s.OpenAPI == nil {
		return false, nil
	}
	if _, builtIn := s.Registry.Provider(name); builtIn {
		return false, nil
	}
	return s.OpenAPI.Has(c.Request.Context(), p, name)
}
