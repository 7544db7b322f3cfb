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

func (g grantAgents) AgentsForGrant(ctx context.Context, p switchboard.Principal) ([]identity.AgentChoice, error) {
	all, err := g.agents.List(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []identity.AgentChoice
	for _, a := range all {
		if _, err := g.agents.ForNewKey(ctx, p, a.ID); err == nil {
			out = append(out, identity.AgentChoice{ID: a.ID, Name: a.Name})
		}
	}
	return out, nil
}
