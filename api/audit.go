package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

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
		Cursor:       c.Query("cursor"),
		Kind:         audit.Kind(c.Query("kind")),
		Tool:         c.Query("tool"),
		Outcome:      c.Query("outcome"),
		ConnectionID: c.Query("connection_id"),
		Principal:    c.Query("principal"),
	}
	if o := opts.Outcome; o != "" && o != "ok" && !slices.Contains(switchboard.Codes(), switchboard.Code(o)) {
		s.fail(c, switchboard.Invalid("outcome", "must be ok or an error code: "+outcomeList()))
		return
	}
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"since", &opts.After}, {"until", &opts.Before}} {
		v := c.Query(f.name)
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339, v)
		if err != nil {
			s.fail(c, switchboard.Invalid(f.name, "must be a time such as 2026-05-04T10:00:00Z (RFC 3339)"))
			return
		}
		*f.dst = &at
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > audit.MaxListLimit {
			s.fail(c, switchboard.Invalid("limit", "must be a whole number from 1 to "+strconv.Itoa(audit.MaxListLimit)))
			return
		}
		opts.Limit = n
	}
	// Members and agents see only their own events, whatever principal they ask for.
	if !p.IsAdmin() {
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

// outcomeList names the outcomes an audit event can have, for the error that refuses
// another.
func outcomeList() string {
	names := []string{"ok"}
	for _, c := range switchboard.Codes() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}
