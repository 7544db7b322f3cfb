package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
)

// ToolLister says what an agent URL would list in tools/list for a selection and a
// tool mode (the MCP adapter's ListedTools).
type ToolLister interface {
	ListedTools(ctx context.Context, p switchboard.Principal, draft agents.Agent) ([]json.RawMessage, agents.ToolMode, error)
}

// listedToolView is one tool an agent URL would list, with its estimated cost in a
// model's context.
type listedToolView struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// estimateTokens is a tool definition's approximate cost in a model's context: about
// four bytes of its JSON per token.
func estimateTokens(def json.RawMessage) int { return (len(def) + 3) / 4 }

// previewAgent answers what an agent with the body's tools and tool mode would serve
// at its URL, before it is saved: every tool definition its tools/list would hold (the
// chosen tools, or the search tools in search mode, and the management tools) and the
// tokens they take. The builder shows it as the agent's context cost.
func (s *server) previewAgent(c *gin.Context) {
	p, err := asUser(c)
	if err == nil {
		err = s.agentsReady()
	}
	if err == nil && s.Lister == nil {
		err = switchboard.Errorf(switchboard.CodeUnavailable, "this deployment cannot preview agent tool lists")
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
	ctx := c.Request.Context()
	switch req.ToolMode {
	case agents.ToolModeInherit, agents.ToolModeAll, agents.ToolModeSearch:
	default:
		s.fail(c, switchboard.Invalid("tool_mode", `must be "", "all" or "search"`))
		return
	}
	switch req.Confirm {
	case agents.ConfirmInherit, agents.ConfirmNever, agents.ConfirmDestructive, agents.ConfirmAlways:
	default:
		s.fail(c, switchboard.Invalid("confirm", `must be "", "never", "destructive" or "always"`))
		return
	}
	switch req.RunTools {
	case agents.RunToolsInherit, agents.RunToolsAuto, agents.RunToolsOn, agents.RunToolsOff:
	default:
		s.fail(c, switchboard.Invalid("run_tools", `must be "", "auto", "on" or "off"`))
		return
	}
	draft := agents.Agent{TenantID: p.TenantID, ToolMode: req.ToolMode, Confirm: req.Confirm, RunTools: req.RunTools, CreatedBy: p.UserID}
	for i, t := range req.Tools {
		if t.Tool == "" {
			s.fail(c, switchboard.Invalid(fmt.Sprintf("tools[%d].tool", i), "is required"))
			return
		}
		draft.Tools = append(draft.Tools, agents.Tool{Tool: t.Tool, ConnectionID: t.ConnectionID, Position: i})
	}
	defs, mode, err := s.Lister.ListedTools(ctx, p, draft)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]listedToolView, 0, len(defs))
	total := 0
	for _, def := range defs {
		var head struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(def, &head); err != nil {
			s.fail(c, err)
			return
		}
		n := estimateTokens(def)
		total += n
		out = append(out, listedToolView{Name: head.Name, Tokens: n})
	}
	c.JSON(http.StatusOK, gin.H{"tool_mode": mode, "tools": out, "tokens": total})
}
