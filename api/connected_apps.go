package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/identity"
)

// Grants are the MCP clients people allowed through Switchboard's OAuth server
// (identity.Server): Settings' Connected apps.
type Grants interface {
	ListGrants(ctx context.Context, p switchboard.Principal) ([]identity.Grant, error)
	RevokeGrant(ctx context.Context, p switchboard.Principal, id string) (identity.Grant, error)
}

// grantsReady refuses the connected apps routes of a deployment wired without them.
func (s *server) grantsReady() error {
	if s.Grants == nil {
		return switchboard.Errorf(switchboard.CodeUnavailable, "connected apps are not enabled in this deployment")
	}
	return nil
}

// listConnectedApps lists the live grants the caller may see: an admin every one of
// the tenant, a member their own.
func (s *server) listConnectedApps(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.grantsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	grants, err := s.Grants.ListGrants(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"connected_apps": grants})
}

// revokeConnectedApp revokes a grant: its tokens stop working on every node at once.
func (s *server) revokeConnectedApp(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.grantsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	g, err := s.Grants.RevokeGrant(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindGrantRevoked, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: "revoked connected app " + g.ID + " (" + g.ClientName + ")"})
	c.Status(http.StatusNoContent)
}
