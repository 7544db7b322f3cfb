package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/usage"
)

// usageQuery reads the figures' range and filters (?range=, ?agent_id=,
// ?connection_id=) and narrows them to what p may see: an admin the whole workspace; a
// member their own calls and those of the agents they created; an agent's key its own
// agent's calls. subject names what the figures are about, for a chart's title.
func (s *server) usageQuery(c *gin.Context, p switchboard.Principal) (q usage.Query, subject string, err error) {
	if s.Usage == nil {
		return q, "", switchboard.Errorf(switchboard.CodeUnavailable, "usage figures are not enabled in this deployment")
	}
	if q.Range, err = usage.ParseRange(c.Query("range")); err != nil {
		return q, "", err
	}
	ctx := c.Request.Context()
	switch {
	case p.Kind == switchboard.PrincipalAgent:
		q.Principals, subject = []string{p.ID()}, "this agent"
	case p.IsAdmin():
		subject = "the workspace"
	default:
		q.Principals, subject = []string{p.ID()}, "your calls and your agents'"
		if s.Agents != nil {
			as, err := s.Agents.List(ctx, p)
			if err != nil {
				return q, "", err
			}
			for _, a := range as {
				if a.CreatedBy == p.UserID {
					q.Principals = append(q.Principals, "agent:"+a.ID)
				}
			}
		}
	}
	if id := c.Query("agent_id"); id != "" {
		if err := s.agentsReady(); err != nil {
			return q, "", err
		}
		a, err := s.Agents.Get(ctx, p, id)
		if err != nil {
			return q, "", err
		}
		principal := "agent:" + a.ID
		if q.Principals != nil && !slices.Contains(q.Principals, principal) {
			return q, "", switchboard.Errorf(switchboard.CodeForbidden, "only the agent's creator and the workspace's admins see its usage")
		}
		q.Principals, subject = []string{principal}, "agent "+a.Name
	}
	if id := c.Query("connection_id"); id != "" {
		conn, err := s.Connections.Get(ctx, p, id)
		if err != nil {
			return q, "", err
		}
		q.ConnectionID = conn.ID
		subject = strings.TrimSpace(conn.Provider + " " + conn.AccountLabel)
		if q.Principals != nil && p.Kind == switchboard.PrincipalUser && c.Query("agent_id") == "" {
			subject += " (your calls and your agents')"
		}
	}
	return q, subject, nil
}

// getUsage answers the figures of the calls the caller may see: in total, per hour
// (24h) or day (7d, 30d), and for the most called tools.
func (s *server) getUsage(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, _, err := s.usageQuery(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	o, err := s.Usage.Overview(c.Request.Context(), p.TenantID, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, o)
}

// usageChart draws the figures of getUsage as SVG: ?chart=calls (the default) or
// latency.
func (s *server) usageChart(c *gin.Context) {
	p, err := principal(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	chart := c.DefaultQuery("chart", usage.ChartCalls)
	if !slices.Contains(usage.Charts, chart) {
		s.fail(c, switchboard.Invalid("chart", "must be "+strings.Join(usage.Charts, " or ")))
		return
	}
	q, subject, err := s.usageQuery(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	o, err := s.Usage.Overview(c.Request.Context(), p.TenantID, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	svg, err := usage.Chart(o, chart, subject)
	if err != nil {
		s.fail(c, switchboard.Invalid("chart", err.Error()))
		return
	}
	writeGraph(c, svg)
}
