package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
)

// listAudit lists the tenant's audit events, newest first: all of them for admins, the
// caller's own for everyone else.
func (s *server) listAudit(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	opts := audit.ListOptions{
		Cursor: c.Query("cursor"),
		Kind:   audit.Kind(c.Query("kind")),
		Tool:   c.Query("tool"),
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > audit.MaxListLimit {
			s.fail(c, switchboard.Invalid("limit", "must be a whole number from 1 to "+strconv.Itoa(audit.MaxListLimit)))
			return
		}
		opts.Limit = n
	}
	if p.Kind == switchboard.PrincipalAgent || !p.Role.IsAdmin() {
		opts.Principal = p.ID()
	}
	events, next, err := s.Audit.List(c.Request.Context(), p.TenantID, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	if events == nil {
		events = []audit.Event{}
	}
	c.JSON(http.StatusOK, gin.H{"events": events, "next_cursor": next})
}
