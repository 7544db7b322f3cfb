package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/tenants"
)

// InvitePath is where a one-time link's page lives: PUBLIC_URL + InvitePath + token.
const InvitePath = "/invite/"

// invitationView is a pending invitation, never its link.
type invitationView struct {
	ID        string           `json:"id"`
	Email     string           `json:"email"`
	Role      switchboard.Role `json:"role"`
	CreatedBy string           `json:"created_by"`
	CreatedAt time.Time        `json:"created_at"`
	ExpiresAt time.Time        `json:"expires_at"`
}

func viewInvitation(i tenants.Invitation) invitationView {
	return invitationView{ID: i.ID, Email: i.Email, Role: i.Role, CreatedBy: i.CreatedBy, CreatedAt: i.CreatedAt, ExpiresAt: i.ExpiresAt}
}

// createdInvitation is a new invitation with its link, shown this once: the admin hands
// it to the person invited.
type createdInvitation struct {
	invitationView
	URL string `json:"url"`
}

type createInvitationRequest struct {
	Email string           `json:"email"`
	Role  switchboard.Role `json:"role"`
}

// createInvitation invites someone to the caller's tenant: admins invite admins and
// members, only owners invite owners.
func (s *server) createInvitation(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req createInvitationRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"email", req.Email}); err != nil {
		s.fail(c, err)
		return
	}
	switch req.Role {
	case "":
		req.Role = switchboard.RoleMember
	case switchboard.RoleMember, switchboard.RoleAdmin:
	case switchboard.RoleOwner:
		if p.Role != switchboard.RoleOwner {
			s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "only an owner may invite another owner"))
			return
		}
	default:
		s.fail(c, switchboard.Invalid("role", "must be one of owner, admin, member"))
		return
	}
	token, inv, err := s.Tenants.CreateInvitation(c.Request.Context(), p.TenantID, p.ID(), req.Email, req.Role)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindUserInvited, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("invited %s as %s (invitation %s)", inv.Email, inv.Role, inv.ID)})
	c.JSON(http.StatusCreated, createdInvitation{invitationView: viewInvitation(inv), URL: s.PublicURL + InvitePath + token})
}

// resendInvitation gives a pending invitation a new link (shown this once) and a new
// expiry; the old link stops working.
func (s *server) resendInvitation(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	list, err := s.Tenants.ListInvitations(ctx, p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	for _, i := range list {
		if i.ID == c.Param("id") && i.Role == switchboard.RoleOwner && p.Role != switchboard.RoleOwner {
			s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "only an owner may resend an invitation to become owner"))
			return
		}
	}
	token, inv, err := s.Tenants.ResendInvitation(ctx, p.TenantID, c.Param("id"), p.ID())
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindUserInvited, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("resent the invitation %s of %s as %s: a new link, the old one stopped working", inv.ID, inv.Email, inv.Role)})
	c.JSON(http.StatusOK, createdInvitation{invitationView: viewInvitation(inv), URL: s.PublicURL + InvitePath + token})
}

// listInvitations lists the tenant's pending invitations, for admins.
func (s *server) listInvitations(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	list, err := s.Tenants.ListInvitations(c.Request.Context(), p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]invitationView, 0, len(list))
	for _, i := range list {
		out = append(out, viewInvitation(i))
	}
	c.JSON(http.StatusOK, gin.H{"invitations": out})
}

// revokeInvitation revokes one of the tenant's pending invitations, for admins: its link
// stops working. Another tenant's invitation is not found, like a missing one.
func (s *server) revokeInvitation(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	inv, err := s.Tenants.RevokeInvitation(c.Request.Context(), p.TenantID, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindInvitationRevoked, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("revoked invitation %s of %s as %s", inv.ID, inv.Email, inv.Role)})
	c.Status(http.StatusNoContent)
}
