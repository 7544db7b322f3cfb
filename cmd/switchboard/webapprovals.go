package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/tenants"
	"github.com/switchboard-hub/switchboard/web"
	"github.com/switchboard-hub/switchboard/workflows"
)

// webApprovals serves the approval pages from the runs executor, naming who asked as
// the tenant knows them (a person's email, an agent's name).
type webApprovals struct {
	runs   *runs.Executor
	users  *tenants.Store
	agents *agents.Service
	// flows, when set, shows the questions workflow runs' steps ask as forms.
	flows *workflows.Service
}

var _ web.Approvals = webApprovals{}

func (a webApprovals) Approval(ctx context.Context, p switchboard.Principal, id string) (web.Approval, error) {
	v, err := a.runs.Approval(ctx, p, id)
	w := a.webApproval(ctx, p, v)
	if err == nil && v.State == runs.StateInputRequired && v.ExpiresAt == nil {
		w.Question = a.question(ctx, p, id)
	}
	return w, err
}

func (a webApprovals) Approve(ctx context.Context, p switchboard.Principal, id, action string) (web.Approval, error) {
	v, err := a.runs.Approve(ctx, p, id, action)
	return a.webApproval(ctx, p, v), err
}

func (a webApprovals) Pending(ctx context.Context, p switchboard.Principal) ([]web.Approval, error) {
	vs, err := a.runs.Pending(ctx, p)
	out := make([]web.Approval, 0, len(vs))
	for _, v := range vs {
		out = append(out, a.webApproval(ctx, p, v))
	}
	return out, err
}

func (a webApprovals) webApproval(ctx context.Context, p switchboard.Principal, v runs.Approval) web.Approval {
	if v.RunID == "" {
		return web.Approval{}
	}
	return web.Approval{
		RunID: v.RunID, Tool: v.Tool, Account: v.Account, Requester: a.requester(ctx, p, v.Requester), Message: v.Message, Arguments: indented(v.Arguments),
		State: string(v.State), Action: v.Action, Error: v.Error, ExpiresAt: v.ExpiresAt, CreatedAt: v.CreatedAt,
	}
}

// requester names who started a run ("user:…" or "agent:…", switchboard.Principal.ID)
// as the tenant knows them; one gone since is named by its id.
func (a webApprovals) requester(ctx context.Context, p switchboard.Principal, who string) string {
	kind, id, _ := strings.Cut(who, ":")
	switch {
	case kind == "user" && a.users != nil:
		if u, err := a.users.User(ctx, p.TenantID, id); err == nil {
			return u.Email
		}
	case kind == "agent" && a.agents != nil:
		if ag, err := a.agents.Get(ctx, p, id); err == nil {
			return "the agent " + ag.Name
		}
	}
	return who
}

// indented lays the arguments out one per line, for the person to read them whole;
// what is not JSON is shown as it is.
func indented(args string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(args), "", "  "); err != nil {
		return args
	}
	return b.String()
}
