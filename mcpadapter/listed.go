package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
)

// ListedTools returns the tool definitions, encoded as tools/list encodes them, that
// an agent URL with draft's tool selection and policies (tool mode, confirm, run
// tools; empty ones take the tenant's settings) would list for p, and the tool mode in
// effect: the bound tools (or, in search mode, search_tools, describe_tool and
// call_tool) and the extensions' management tools where they are served. The builder
// UI estimates an agent's context cost from it before the agent is saved, so the
// estimate counts what the URL really serves.
func (a *Adapter) ListedTools(ctx context.Context, p switchboard.Principal, draft agents.Agent) ([]json.RawMessage, agents.ToolMode, error) {
	bindings, err := a.opts.Router.Tools(ctx, p)
	if err != nil {
		return nil, "", err
	}
	mode, runTools := agents.ToolModeAll, true // as refresh has it without an agents service
	if a.opts.Agents != nil {
		_, settings, err := a.opts.Agents.AgentAndSettings(ctx, p.TenantID, "")
		if err != nil {
			return nil, "", err
		}
		mode = draft.EffectiveToolMode(settings)
		runTools = draft.EffectiveRunTools(settings).Serves(draft.EffectiveConfirm(settings))
	}
	var tools []mcp.Tool
	for _, b := range modeBindings(scopeBindings(bindings, &draft, runTools), mode) {
		if mode == agents.ToolModeSearch && !b.Tool.Provider.Connectionless {
			continue // found through the search tools
		}
		t, err := a.hubTool(b)
		if err != nil {
			return nil, "", err
		}
		tools = append(tools, t.tool())
	}
	// Extensions list for an agent URL what they list there (the workflows the draft
	// selects): a draft not saved yet has no id, so it gets a stand-in.
	agentID := draft.ID
	if agentID == "" {
		agentID = "agt_draft"
	}
	sc := Scope{Principal: p, AgentID: agentID, Agent: &draft}
	for _, e := range a.opts.Extensions {
		if e.Tools == nil || (e.RunTools && !runTools) {
			continue
		}
		ts, err := e.Tools(ctx, sc)
		if err != nil {
			return nil, "", fmt.Errorf("tools of extension %s: %w", e.Name, err)
		}
		for _, t := range ts {
			tools = append(tools, a.listedAs(t).Tool)
		}
	}
	out := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, "", fmt.Errorf("encode tool %s: %w", t.Name, err)
		}
		out = append(out, raw)
	}
	return out, mode, nil
}
