package mcpadapter

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// oneAgent is an agents service with one agent of one tenant.
type oneAgent struct {
	agent *agents.Agent
}

func (o *oneAgent) AgentAndSettings(_ context.Context, tenant switchboard.TenantID, id string) (agents.Agent, agents.Settings, error) {
	st := agents.DefaultSettings(tenant)
	// The runs tests set their confirm policies on the router (runsEnv.policy), not in
	// these settings, and call the run tools at every URL: they are on.
	st.RunTools = agents.RunToolsOn
	if id == "" {
		return agents.Agent{}, st, nil
	}
	if o.agent == nil || o.agent.TenantID != tenant || o.agent.ID != id {
		return agents.Agent{}, agents.Settings{}, switchboard.NotFound("agent")
	}
	return *o.agent, st, nil
}

// PrivateUser is "" for the agent's key: it runs on shared connections only.
func (o *oneAgent) PrivateUser(_ context.Context, p switchboard.Principal) (string, error) {
	if p.Kind != switchboard.PrincipalAgent {
		return p.UserID, nil
	}
	return "", nil
}

// Selection is the agent's tools, each on its connection.
func (o *oneAgent) Selection(_ context.Context, p switchboard.Principal) ([]router.Selected, error) {
	if o.agent == nil || p.Kind != switchboard.PrincipalAgent || p.AgentID != o.agent.ID || p.TenantID != o.agent.TenantID {
		return nil, nil
	}
	out := make([]router.Selected, 0, len(o.agent.Tools))
	for _, t := range o.agent.Tools {
		out = append(out, router.Selected{Tool: t.Tool, ConnectionID: t.ConnectionID})
	}
	return out, nil
}

// TestRunsAtAnAgentURL: an agent runs only its own tools in the background, and its
// runs are its own (not its creator's).
func TestRunsAtAnAgentURL(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ag := &oneAgent{}
		var agentP switchboard.Principal
		e := newRunsEnvWith(t, db, ag, func(e *runsEnv) keys {
			ag.agent = &agents.Agent{ID: "agt_reader", TenantID: e.ann.TenantID, Name: "reader", CreatedBy: e.ann.UserID, Version: 1,
				Tools: []agents.Tool{{AgentID: "agt_reader", Tool: "notes_get_note", TenantID: e.ann.TenantID, ConnectionID: e.connA}}}
			agentP = switchboard.Principal{TenantID: e.ann.TenantID, TenantSlug: e.ann.TenantSlug, Kind: switchboard.PrincipalAgent, UserID: e.ann.UserID, AgentID: "agt_reader"}
			return keys{"key-agent": agentP}
		})
		c := e.connectTo(t, "/mcp/"+e.ann.TenantSlug+"/agents/agt_reader", "key-agent", mcp.LATEST_PROTOCOL_VERSION, nil)
		id := e.up.Put("for the agent")

		refused := call(t, c, toolRunAsync, map[string]any{"tool": "notes_create_note", "arguments": map[string]any{"text": "not mine to run"}})
		if !refused.IsError || !strings.Contains(text(refused), "not found") {
			t.Errorf("run_async of a tool the agent lacks: %q", text(refused))
		}
		res := call(t, c, toolRunAsync, map[string]any{"tool": "notes_get_note", "arguments": map[string]any{"id": id}})
		var started runs.View
		structured(t, res, &started)
		if res.IsError || started.ConnectionID != e.connA {
			t.Fatalf("run_async at the agent URL: %q", text(res))
		}
		if got := e.waitRun(t, agentP, started.ID); got.State != runs.StateCompleted || !strings.Contains(string(got.Output), "for the agent") {
			t.Errorf("the agent's run = %+v", got)
		}
		// Its creator, at the tenant URL, does not see the agent's run.
		ann := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		if res := call(t, ann, toolGetRun, map[string]any{"run_id": started.ID}); !res.IsError || text(res) != "run not found" {
			t.Errorf("ann reads the agent's run: %q", text(res))
		}
		for _, req := range e.up.Requests() {
			if req.Method == "POST" {
				t.Errorf("a tool outside the agent's reached the upstream: %+v", req)
			}
		}
	})
}
