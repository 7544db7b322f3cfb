package main

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/identity"
)

// grantAgents lets the consent page hand an agent to an MCP client under the rule for
// creating the agent's API keys.
type grantAgents struct{ agents *agents.Service }

var _ identity.GrantableAgents = grantAgents{}

func (g grantAgents) AgentForGrant(ctx context.Context, p switchboard.Principal, id string) (string, string, error) {
	a, err := g.agents.ForNewKey(ctx, p, id)
	if err != nil {
		return "", "", err
	}
	return a.Name, a.CreatedBy, nil
}
