package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/providers"
)

// The audit kinds of agent changes.
const (
	kindAgentCreated       audit.Kind = "agent_created"
	kindAgentUpdated       audit.Kind = "agent_updated"
	kindAgentDeleted       audit.Kind = "agent_deleted"
	kindMCPSettingsChanged audit.Kind = "mcp_settings_changed"
)

// agentView is an agent as the API shows it, with the policies in effect (its own or
// the tenant's) and its MCP URL.
type agentView struct {
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Description       string          `json:"description"`
	Instructions      string          `json:"instructions"`
	Confirm           agents.Confirm  `json:"confirm"`
	Approval          agents.Approval `json:"approval"`
	ToolMode          agents.ToolMode `json:"tool_mode"`
	RunTools          agents.RunTools `json:"run_tools"`
	Catalog           agents.Catalog  `json:"catalog"`
	EffectiveConfirm  agents.Confirm  `json:"effective_confirm"`
	EffectiveApproval agents.Approval `json:"effective_approval"`
	EffectiveToolMode agents.ToolMode `json:"effective_tool_mode"`
	EffectiveRunTools agents.RunTools `json:"effective_run_tools"`
	EffectiveCatalog  agents.Catalog  `json:"effective_catalog"`
	Tools             []agentToolView `json:"tools"`
	MCPURL            string          `json:"mcp_url"`
	// ActiveKeys counts the agent's keys not revoked; LastUsedAt is when one of its
	// keys was used last.
	ActiveKeys int        `json:"active_keys"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	CreatedBy  string     `json:"created_by"`
	UpdatedBy  string     `json:"updated_by"`
	Version    int64      `json:"version"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// agentToolView is one selected tool with the connection it is bound to, and what it
// does (from the catalog).
type agentToolView struct {
	Tool         string `json:"tool"`
	ConnectionID string `json:"connection_id"`
	Provider     string `json:"provider,omitempty"`
	Title        string `json:"title,omitempty"`
	ReadOnly     bool   `json:"read_only"`
	Destructive  bool   `json:"destructive"`
	// ConnectionMissing says the connection the tool is bound to no longer exists
	// (it was disconnected): the tool is not served until it is bound again.
	ConnectionMissing bool `json:"connection_missing,omitempty"`
}

// existingConnections reports which connections the agents' tools are bound to
// still exist in p's tenant.
func (s *server) existingConnections(ctx context.Context, p switchboard.Principal, list ...agents.Agent) (map[string]bool, error) {
	var ids []string
	for _, a := range list {
		for _, t := range a.Tools {
			if t.ConnectionID != "" { // a workflow's tool has none
				ids = append(ids, t.ConnectionID)
			}
		}
	}
	return s.Connections.Existing(ctx, p, ids)
}

// keyUse is what an agent's keys say of it: how many are active, and their last use.
type keyUse struct {
	active   int
	lastUsed *time.Time
}

// agentKeyUse reads the tenant's keys once and sums them up per agent.
func (s *server) agentKeyUse(ctx context.Context, p switchboard.Principal) (map[string]keyUse, error) {
	keys, err := s.Tenants.ListKeys(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	out := map[string]keyUse{}
	for _, k := range keys {
		if k.AgentID == nil || k.Revoked() {
			continue
		}
		u := out[*k.AgentID]
		u.active++
		if k.LastUsedAt != nil && (u.lastUsed == nil || k.LastUsedAt.After(*u.lastUsed)) {
			u.lastUsed = k.LastUsedAt
		}
		out[*k.AgentID] = u
	}
	return out, nil
}

// agentFacts are what an agent's view reads besides the agent: which of its tools'
// connections still exist, its keys' use, and the tools connections bring themselves
// (a remote MCP server's, an API's added by its description) by name.
type agentFacts struct {
	exists map[string]bool
	use    map[string]keyUse
	tools  map[string]*providers.Tool
}

// agentFacts reads the facts of the agents' views for p.
func (s *server) agentFacts(ctx context.Context, p switchboard.Principal, list ...agents.Agent) (agentFacts, error) {
	exists, err := s.existingConnections(ctx, p, list...)
	if err != nil {
		return agentFacts{}, err
	}
	use, err := s.agentKeyUse(ctx, p)
	if err != nil {
		return agentFacts{}, err
	}
	tools, err := s.connectionTools(ctx, p, list...)
	if err != nil {
		return agentFacts{}, err
	}
	return agentFacts{exists: exists, use: use, tools: tools}, nil
}

// connectionTools returns, by name, the tools p may call that connections bring
// themselves, when one of the agents selected a tool the registry does not have (else
// none: listing them may ask remote servers). A tool on a connection p may not use is
// not among them: its view names no provider or title.
func (s *server) connectionTools(ctx context.Context, p switchboard.Principal, list ...agents.Agent) (map[string]*providers.Tool, error) {
	need := false
	for _, a := range list {
		for _, t := range a.Tools {
			if _, ok := s.Registry.Tool(t.Tool); !ok && t.ConnectionID != "" {
				need = true
			}
		}
	}
	if !need {
		return nil, nil
	}
	bindings, err := s.tools().Tools(ctx, p)
	if err != nil {
		return nil, err
	}
	out := map[string]*providers.Tool{}
	for _, b := range bindings {
		if b.Tool.Provider.PerConnection() {
			out[b.Tool.Name] = b.Tool
		}
	}
	return out, nil
}

func (s *server) viewAgent(a agents.Agent, st agents.Settings, slug string, f agentFacts) agentView {
	exists, use := f.exists, f.use
	v := agentView{
		ActiveKeys: use[a.ID].active, LastUsedAt: use[a.ID].lastUsed,
		ID: a.ID, Name: a.Name, Description: a.Description, Instructions: a.Instructions,
		Confirm: a.Confirm, Approval: a.Approval, ToolMode: a.ToolMode, RunTools: a.RunTools, Catalog: a.Catalog,
		EffectiveConfirm: a.EffectiveConfirm(st), EffectiveApproval: a.EffectiveApproval(st), EffectiveToolMode: a.EffectiveToolMode(st),
		EffectiveRunTools: a.EffectiveRunTools(st), EffectiveCatalog: a.EffectiveCatalog(st),
		Tools:     make([]agentToolView, 0, len(a.Tools)),
		MCPURL:    s.PublicURL + "/mcp/" + slug + "/agents/" + a.ID,
		CreatedBy: a.CreatedBy, UpdatedBy: a.UpdatedBy, Version: a.Version, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
	for _, t := range a.Tools {
		tv := agentToolView{Tool: t.Tool, ConnectionID: t.ConnectionID, ConnectionMissing: t.ConnectionID != "" && !exists[t.ConnectionID]}
		tool, ok := s.Registry.Tool(t.Tool)
		if !ok {
			tool, ok = f.tools[t.Tool]
		}
		if ok {
			tv.Provider, tv.Title = tool.Provider.Name, tool.Info.Title
			tv.ReadOnly, tv.Destructive = tool.Info.Hints.ReadOnly, tool.Info.Hints.Destructive
		}
		v.Tools = append(v.Tools, tv)
	}
	return v
}

// agentRequest creates or replaces an agent. Version is required to replace one.
type agentRequest struct {
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	Instructions string             `json:"instructions"`
	Confirm      agents.Confirm     `json:"confirm"`
	Approval     agents.Approval    `json:"approval"`
	ToolMode     agents.ToolMode    `json:"tool_mode"`
	RunTools     agents.RunTools    `json:"run_tools"`
	Catalog      agents.Catalog     `json:"catalog"`
	Tools        []agentToolRequest `json:"tools"`
	Version      *int64             `json:"version,omitempty"`
}

type agentToolRequest struct {
	Tool         string `json:"tool"`
	ConnectionID string `json:"connection_id"`
}

func (r agentRequest) input() agents.Input {
	in := agents.Input{Name: r.Name, Description: r.Description, Instructions: r.Instructions, Confirm: r.Confirm, Approval: r.Approval, ToolMode: r.ToolMode, RunTools: r.RunTools, Catalog: r.Catalog}
	for _, t := range r.Tools {
		in.Tools = append(in.Tools, agents.ToolInput{Tool: t.Tool, ConnectionID: t.ConnectionID})
	}
	return in
}

// agentsReady refuses agent routes when the deployment has no agents service.
func (s *server) agentsReady() error {
	if s.Agents == nil {
		return switchboard.Errorf(switchboard.CodeUnavailable, "agents are not enabled in this deployment")
	}
	return nil
}

// respondAgent answers with the agent's view, its effective policies read from the
// tenant's settings.
func (s *server) respondAgent(c *gin.Context, p switchboard.Principal, a agents.Agent, status int) {
	st, err := s.settingsFor(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	f, err := s.agentFacts(c.Request.Context(), p, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(status, s.viewAgent(a, st, p.TenantSlug, f))
}

// settingsFor reads the tenant's MCP settings, for the effective policies of a view.
func (s *server) settingsFor(ctx context.Context, p switchboard.Principal) (agents.Settings, error) {
	return s.Agents.Settings(ctx, p)
}

func (s *server) listAgents(c *gin.Context) {
	p, err := principal(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	list, err := s.Agents.List(ctx, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	st, err := s.settingsFor(ctx, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	f, err := s.agentFacts(ctx, p, list...)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]agentView, 0, len(list))
	for _, a := range list {
		out = append(out, s.viewAgent(a, st, p.TenantSlug, f))
	}
	c.JSON(http.StatusOK, gin.H{"agents": out})
}

func (s *server) getAgent(c *gin.Context) {
	p, err := principal(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a, err := s.Agents.Get(ctx, p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.respondAgent(c, p, a, http.StatusOK)
}

func (s *server) createAgent(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	var req agentRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Version != nil {
		s.fail(c, switchboard.Invalid("version", "is set by the hub; omit it when creating an agent"))
		return
	}
	ctx := c.Request.Context()
	a, err := s.Agents.Create(ctx, p, req.input())
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: kindAgentCreated, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok", Detail: "created agent " + a.ID})
	s.respondAgent(c, p, a, http.StatusCreated)
}

// updateAgent replaces an agent (PUT: every field; tools replace the selection). The
// version read last is required, so two editors do not overwrite each other.
func (s *server) updateAgent(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	var req agentRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if req.Version == nil {
		s.fail(c, switchboard.Invalid("version", "is required: send the version you read, so a concurrent change is not overwritten"))
		return
	}
	ctx := c.Request.Context()
	a, err := s.Agents.Update(ctx, p, c.Param("id"), *req.Version, req.input())
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: kindAgentUpdated, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok", Detail: "updated agent " + a.ID})
	s.respondAgent(c, p, a, http.StatusOK)
}

// deleteAgent removes an agent and revokes its API keys.
func (s *server) deleteAgent(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a, err := s.Agents.Delete(ctx, p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	keys, err := s.Tenants.ListKeys(ctx, p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	for _, k := range keys {
		if k.AgentID != nil && *k.AgentID == a.ID && !k.Revoked() {
			if _, err := s.Tenants.RevokeKey(ctx, p.TenantID, k.ID); err != nil {
				s.fail(c, err)
				return
			}
		}
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: kindAgentDeleted, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok", Detail: "deleted agent " + a.ID + " and revoked its keys"})
	c.Status(http.StatusNoContent)
}

// createAgentKey mints an API key for the agent (its creator or an admin may, an admin
// only while the agent runs on no other user's private connection): the key serves
// the agent's MCP URL only, and is shown this once.
func (s *server) createAgentKey(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	var req createKeyRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"name", req.Name}); err != nil {
		s.fail(c, err)
		return
	}
	expires, err := req.expiry()
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a, err := s.Agents.ForNewKey(ctx, p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	plain, key, err := s.Tenants.CreateExpiringAgentKey(ctx, p.TenantID, a.CreatedBy, a.ID, req.Name, p.UserID, expires)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: audit.KindKeyCreated, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: "created key " + key.ID + " for agent " + a.ID})
	c.JSON(http.StatusCreated, gin.H{"key": plain, "id": key.ID, "name": key.Name, "prefix": key.Prefix, "agent_id": a.ID,
		"user_id": key.UserID, "created_at": key.CreatedAt, "expires_at": key.ExpiresAt, "mcp_url": s.PublicURL + "/mcp/" + p.TenantSlug + "/agents/" + a.ID})
}

// listAgentKeys lists an agent's keys (never the keys themselves).
func (s *server) listAgentKeys(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
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
	keys, err := s.Tenants.ListKeys(ctx, p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := []keyView{}
	for _, k := range keys {
		if k.AgentID != nil && *k.AgentID == a.ID {
			out = append(out, viewKey(k))
		}
	}
	c.JSON(http.StatusOK, gin.H{"keys": out})
}

// mcpSettingsRequest changes the tenant's MCP settings.
type mcpSettingsRequest struct {
	Confirm agents.Confirm `json:"confirm"`
	// Approval is who may confirm a call: relay (the default, also when left out) or
	// person (only the approval page).
	Approval agents.Approval `json:"approval"`
	ToolMode agents.ToolMode `json:"tool_mode"`
	// RunTools is whether the run tools are listed: auto (the default, also when left
	// out: where the confirm policy asks before some calls), on or off.
	RunTools agents.RunTools `json:"run_tools"`
	// Catalog is which providers' tools are offered: connected (the default, also
	// when left out) or all (also those of providers not connected yet, whose call
	// asks the person to connect).
	Catalog agents.Catalog `json:"catalog"`
}

type mcpSettingsView struct {
	Confirm   agents.Confirm  `json:"confirm"`
	Approval  agents.Approval `json:"approval"`
	ToolMode  agents.ToolMode `json:"tool_mode"`
	RunTools  agents.RunTools `json:"run_tools"`
	Catalog   agents.Catalog  `json:"catalog"`
	UpdatedAt *time.Time      `json:"updated_at,omitempty"`
}

func viewSettings(st agents.Settings) mcpSettingsView {
	v := mcpSettingsView{Confirm: st.Confirm, Approval: st.EffectiveApproval(), ToolMode: st.ToolMode, RunTools: st.EffectiveRunTools(), Catalog: st.EffectiveCatalog()}
	if !st.UpdatedAt.IsZero() {
		v.UpdatedAt = &st.UpdatedAt
	}
	return v
}

func (s *server) getMCPSettings(c *gin.Context) {
	p, err := principal(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	st, err := s.Agents.Settings(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, viewSettings(st))
}

func (s *server) putMCPSettings(c *gin.Context) {
	p, err := asAdmin(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	var req mcpSettingsRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	st, err := s.Agents.PutSettings(c.Request.Context(), p, agents.Settings{Confirm: req.Confirm, Approval: req.Approval, ToolMode: req.ToolMode, RunTools: req.RunTools, Catalog: req.Catalog})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.record(audit.Event{TenantID: p.TenantID, Kind: kindMCPSettingsChanged, Principal: p.ID(), KeyID: p.KeyID, Outcome: "ok",
		Detail: "confirm " + string(st.Confirm) + ", approval " + string(st.EffectiveApproval()) + ", tool mode " + string(st.ToolMode) + ", run tools " + string(st.EffectiveRunTools()) + ", catalog " + string(st.EffectiveCatalog())})
	c.JSON(http.StatusOK, viewSettings(st))
}

// agentConnection is connectionFor for an agent's key: the tool must be one the agent
// selected, and it runs on the connection it is bound to (none for a workflow, which
// the router runs as the workflows provider's tool, each step checked against the same
// selection). An agent's key calls nothing else through the REST API either.
func (s *server) agentConnection(ctx context.Context, p switchboard.Principal, tool, named string) (string, error) {
	if s.Agents == nil {
		return "", switchboard.NotFound("tool " + tool)
	}
	a, err := s.Agents.Get(ctx, p, p.AgentID)
	if err != nil {
		return "", err
	}
	for _, t := range a.Tools {
		if t.Tool != tool {
			continue
		}
		if named != "" && named != t.ConnectionID {
			return "", switchboard.Invalid("connection_id", "is not the connection this agent's tool is bound to; leave it out")
		}
		return t.ConnectionID, nil
	}
	return "", switchboard.NotFound("tool " + tool + " (not one of this agent's tools)")
}
