package api

import (
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/tenants"
)

// tenantView is a tenant with the MCP URL its agents connect to.
type tenantView struct {
	ID        switchboard.TenantID `json:"id"`
	Slug      string               `json:"slug"`
	Name      string               `json:"name"`
	MCPURL    string               `json:"mcp_url"`
	CreatedAt time.Time            `json:"created_at"`
}

func (s *server) viewTenant(t tenants.Tenant) tenantView {
	return tenantView{ID: t.ID, Slug: t.Slug, Name: t.Name, MCPURL: s.PublicURL + "/mcp/" + t.Slug, CreatedAt: t.CreatedAt}
}

// getTenant returns the caller's own tenant.
func (s *server) getTenant(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	t, err := s.Tenants.Tenant(c.Request.Context(), p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s.viewTenant(t))
}

// listTenants lists every tenant of the deployment, for the operator.
func (s *server) listTenants(c *gin.Context) {
	if _, err := asOperator(c); err != nil {
		s.fail(c, err)
		return
	}
	list, err := s.Tenants.ListTenants(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]tenantView, 0, len(list))
	for _, t := range list {
		out = append(out, s.viewTenant(t))
	}
	c.JSON(http.StatusOK, gin.H{"tenants": out})
}

// createTenantRequest creates a tenant and its owner.
type createTenantRequest struct {
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	OwnerEmail string `json:"owner_email"`
}

// createdTenant is the answer to a new tenant: the owner's API key is in it once and
// never again.
type createdTenant struct {
	Tenant tenantView `json:"tenant"`
	Owner  userView   `json:"owner"`
	APIKey createdKey `json:"api_key"`
}

// createTenant creates a tenant, its owner user and the owner's first API key, all or
// nothing.
func (s *server) createTenant(c *gin.Context) {
	p, err := asOperator(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req createTenantRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"slug", req.Slug}, [2]string{"name", req.Name}, [2]string{"owner_email", req.OwnerEmail}); err != nil {
		s.fail(c, err)
		return
	}
	if err := validEmail("owner_email", req.OwnerEmail); err != nil {
		s.fail(c, err)
		return
	}
	t, owner, plain, key, err := s.Tenants.CreateTenantWithOwner(c.Request.Context(), req.Slug, req.Name, req.OwnerEmail)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindTenantCreated, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("created tenant %s (%s)", t.Slug, t.ID)})
	s.record(audit.Event{TenantID: t.ID, Kind: audit.KindTenantCreated, Principal: "operator", KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("tenant created with owner %s and owner key %s", owner.ID, key.ID)})
	c.JSON(http.StatusCreated, createdTenant{Tenant: s.viewTenant(t), Owner: viewUser(owner), APIKey: createdKey{keyView: viewKey(key), Key: plain}})
}

// record hands an audit event to the recorder, if there is one.
func (s *server) record(e audit.Event) {
	if s.Recorder != nil {
		s.Recorder.Record(e)
	}
}

// validEmail checks an address the way the user store does, before a tenant is
// created for it: a bare address, no display name.
func validEmail(field, v string) error {
	v = strings.TrimSpace(v)
	addr, err := mail.ParseAddress(v)
	if err != nil || addr.Address != v || addr.Name != "" || len(v) > 254 {
		return switchboard.Invalid(field, "must be an email address such as ada@example.com")
	}
	return nil
}
