package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
)

// AgentConsole serves an agent's MCP URL to a caller the API authenticated (the MCP
// adapter's ServeConsole): one stateless MCP request, as the agent.
type AgentConsole interface {
	ServeConsole(w http.ResponseWriter, r *http.Request, p switchboard.Principal)
}

// agentConsole is POST /api/agents/{id}/mcp: a person who may manage the agent (its
// creator or an admin) sends MCP requests of the stateless 2026-07-28 version to the
// agent's URL, with their session or key instead of the agent's key. The request runs
// as the agent's key would run it: the agent's tool list and schema profile, its
// confirm policy asking in the form the request's client declared, the router and the
// audit.
func (s *server) agentConsole(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err == nil && s.Console == nil {
		err = switchboard.Errorf(switchboard.CodeUnavailable, "this deployment has no agent console")
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a, err := s.Agents.Manageable(ctx, p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	// The agent runs as its keys do: as its creator's agent, with the creator's role.
	// The person's own credential stands for the key: Activity names it, and the agent
	// runs on its creator's private connections only when that person is the creator
	// and saved it last, as with a key they made (agents.Service.PrivateUser).
	creator, err := s.Tenants.User(ctx, p.TenantID, a.CreatedBy)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			err = switchboard.Errorf(switchboard.CodeConflict, "the agent's creator has left the workspace, so its keys no longer work; save the agent again under your name to use it")
		}
		s.fail(c, err)
		return
	}
	s.Console.ServeConsole(c.Writer, c.Request, switchboard.Principal{TenantID: p.TenantID, TenantSlug: p.TenantSlug,
		Kind: switchboard.PrincipalAgent, UserID: creator.ID, AgentID: a.ID, Role: creator.Role, KeyID: p.KeyID})
}
