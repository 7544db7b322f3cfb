package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/tenants"
)

// userView is a user of the caller's tenant.
type userView struct {
	ID        string           `json:"id"`
	Email     string           `json:"email"`
	Role      switchboard.Role `json:"role"`
	CreatedAt time.Time        `json:"created_at"`
}

func viewUser(u tenants.User) userView {
	return userView{ID: u.ID, Email: u.Email, Role: u.Role, CreatedAt: u.CreatedAt}
}

// listUsers lists the tenant's users for admins; anyone else sees only themselves.
func (s *server) listUsers(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	var list []tenants.User
	if p.IsAdmin() {
		list, err = s.Tenants.ListUsers(ctx, p.TenantID)
	} else {
		var u tenants.User
		u, err = s.Tenants.User(ctx, p.TenantID, p.UserID)
		list = []tenants.User{u}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]userView, 0, len(list))
	for _, u := range list {
		out = append(out, viewUser(u))
	}
	c.JSON(http.StatusOK, gin.H{"users": out})
}

// createUserRequest adds a user to the caller's tenant.
type createUserRequest struct {
	Email string           `json:"email"`
	Role  switchboard.Role `json:"role"`
}

// firstKeyName names the API key a new user is created with.
const firstKeyName = "first"

// createdUser is the answer to a new user: the user and, once and never again, their
// first API key. It is the only way to a key for someone else, and the admin who
// created the user hands it over.
type createdUser struct {
	userView
	APIKey createdKey `json:"api_key"`
}

// createUser adds a user with a first API key; admins may add admins and members, only
// owners add owners.
func (s *server) createUser(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req createUserRequest
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
			s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "only an owner may add another owner"))
			return
		}
	default:
		s.fail(c, switchboard.Invalid("role", "must be one of owner, admin, member"))
		return
	}
	u, plain, key, err := s.Tenants.CreateUserWithKey(c.Request.Context(), p.TenantID, req.Email, req.Role, firstKeyName)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindUserCreated, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("created user %s (%s) with first key %s", u.ID, u.Role, key.ID)})
	c.JSON(http.StatusCreated, createdUser{userView: viewUser(u), APIKey: createdKey{keyView: viewKey(key), Key: plain}})
}

// setUserRoleRequest changes a user's role.
type setUserRoleRequest struct {
	Role switchboard.Role `json:"role"`
	// From is the role the person confirmed changing from ("Change grace from member
	// to admin?"): when given, the change happens only if it is still the user's role,
	// so a confirmation made on a stale page changes nothing. A change of one's own
	// role, and one that grants or takes away owner, must carry it.
	From switchboard.Role `json:"from,omitempty"`
}

// setUserRole changes the role of one of the tenant's users. Owners and admins may;
// only an owner grants or takes away the owner role, and the tenant's last owner keeps
// it. Another tenant's user is not found, like a missing one.
func (s *server) setUserRole(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req setUserRoleRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	switch req.Role {
	case switchboard.RoleOwner, switchboard.RoleAdmin, switchboard.RoleMember:
	default:
		s.fail(c, switchboard.Invalid("role", "must be one of owner, admin, member"))
		return
	}
	switch req.From {
	case "", switchboard.RoleOwner, switchboard.RoleAdmin, switchboard.RoleMember:
	default:
		s.fail(c, switchboard.Invalid("from", "must be one of owner, admin, member: the user's role you confirm changing"))
		return
	}
	ctx := c.Request.Context()
	id := c.Param("id")
	target, err := s.Tenants.User(ctx, p.TenantID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if (target.Role == switchboard.RoleOwner || req.Role == switchboard.RoleOwner) && p.Role != switchboard.RoleOwner {
		s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "only an owner may grant or take away the owner role"))
		return
	}
	if err := confirmedRoleChange(p, target, req); err != nil {
		s.fail(c, err)
		return
	}
	before, after, err := s.Tenants.SetUserRole(ctx, p.TenantID, id, req.Role)
	if err != nil {
		s.fail(c, err)
		return
	}
	if before.Role != after.Role {
		s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindUserRoleChanged, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
			Detail: fmt.Sprintf("changed the role of user %s from %s to %s", id, before.Role, after.Role)})
	}
	c.JSON(http.StatusOK, viewUser(after))
}

// confirmedRoleChange checks the confirmation a role change carries (its from): the
// changes that decide who controls the workspace (one's own role, which one may not
// get back, and the owner role) need it; any change that carries it happens only if
// the user still has that role.
func confirmedRoleChange(p switchboard.Principal, target tenants.User, req setUserRoleRequest) error {
	if req.From == "" {
		if target.Role == req.Role {
			return nil
		}
		switch {
		case target.ID == p.UserID:
			return switchboard.Invalid("from", fmt.Sprintf("is required to change your own role: send the role you confirm giving up, %q, as from", target.Role))
		case target.Role == switchboard.RoleOwner || req.Role == switchboard.RoleOwner:
			return switchboard.Invalid("from", fmt.Sprintf("is required to grant or take away the owner role: send the user's role you confirm changing, %q, as from", target.Role))
		}
		return nil
	}
	if req.From != target.Role {
		return &switchboard.Error{Code: switchboard.CodeConflict, Field: "from",
			Message: fmt.Sprintf("is %s, but %s is %s now: the role changed after it was shown; reload and confirm again", req.From, target.Email, target.Role)}
	}
	return nil
}

// The ways DELETE /api/users/{id} deals with the removed user's connections (the
// connections query parameter).
const (
	// connectionsRevoke disconnects their private connections (revoked at the
	// provider, deleted) and hands their shared ones to the admin removing them.
	connectionsRevoke = "revoke"
	// connectionsTransfer hands every one of them to an owner or admin: the one named
	// by the to parameter, or the admin removing them.
	connectionsTransfer = "transfer"
)

// removeUser removes one of the tenant's users: their API keys are revoked, their web
// sessions end, the agents they created go with them, and their connections are
// revoked or handed over (?connections=revoke, the default, or transfer[&to=user]).
// Owners and admins may; only an owner removes an owner, the last owner stays, and
// nobody removes themselves. Another tenant's user is not found, like a missing one.
func (s *server) removeUser(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	id := c.Param("id")
	target, err := s.Tenants.User(ctx, p.TenantID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	to, err := s.connectionsRecipient(c, p, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if target.ID == p.UserID {
		s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "you cannot remove yourself; ask another owner or admin"))
		return
	}
	if target.Role == switchboard.RoleOwner && p.Role != switchboard.RoleOwner {
		s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "only an owner may remove an owner"))
		return
	}
	r, err := s.Tenants.RemoveUser(ctx, p.TenantID, id, p.Operator)
	if err != nil {
		s.fail(c, err)
		return
	}
	keys := strings.Join(r.RevokedKeys, " ")
	if len(keys) > 300 { // the detail holds 500 characters
		keys = fmt.Sprintf("%d keys", len(r.RevokedKeys))
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindUserRemoved, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: fmt.Sprintf("removed user %s (%s); revoked keys [%s]; ended %d sessions", id, r.User.Role, keys, r.EndedSessions)})
	if _, err := s.Connections.ReleaseRemovedUser(ctx, p, id, to); err != nil {
		s.fail(c, switchboard.Internal(fmt.Errorf("release the connections of removed user %s: %w", id, err)))
		return
	}
	c.Status(http.StatusNoContent)
}

// connectionsRecipient reads what DELETE /api/users/{id} does with the user's
// connections: "" to revoke the private ones, or the user who takes them all over.
func (s *server) connectionsRecipient(c *gin.Context, p switchboard.Principal, removed string) (string, error) {
	mode, to := c.Query("connections"), c.Query("to")
	switch mode {
	case "", connectionsRevoke:
		if to != "" {
			return "", switchboard.Invalid("to", "is only for connections=transfer")
		}
		return "", nil
	case connectionsTransfer:
	default:
		return "", switchboard.Invalid("connections", fmt.Sprintf("must be %q (the default) or %q", connectionsRevoke, connectionsTransfer))
	}
	if to == "" {
		return p.UserID, nil
	}
	u, err := s.Tenants.User(c.Request.Context(), p.TenantID, to)
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return "", switchboard.Invalid("to", "is not a user of this tenant")
	}
	if err != nil {
		return "", err
	}
	if u.ID == removed || !u.Role.IsAdmin() {
		return "", switchboard.Invalid("to", "must be another owner or admin of the tenant")
	}
	return u.ID, nil
}
