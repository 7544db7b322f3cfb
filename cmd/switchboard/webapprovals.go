package main

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/web"
)

// webApprovals serves the approval pages from the runs executor.
type webApprovals struct{ runs *runs.Executor }

var _ web.Approvals = webApprovals{}

func (a webApprovals) Approval(ctx context.Context, p switchboard.Principal, id string) (web.Approval, error) {
	v, err := a.runs.Approval(ctx, p, id)
	return webApproval(v), err
}

func (a webApprovals) Approve(ctx context.Context, p switchboard.Principal, id, action string) (web.Approval, error) {
	v, err := a.runs.Approve(ctx, p, id, action)
	return webApproval(v), err
}

func (a webApprovals) Pending(ctx context.Context, p switchboard.Principal) ([]web.Approval, error) {
	vs, err := a.runs.Pending(ctx, p)
	out := make([]web.Approval, 0, len(vs))
	for _, v := range vs {
		out = append(out, webApproval(v))
	}
	return out, err
}

func webApproval(v runs.Approval) web.Approval {
	return web.Approval{
		RunID: v.RunID, Tool: v.Tool, Account: v.Account, Requester: v.Requester, Message: v.Message, Arguments: v.Arguments,
		State: string(v.State), Action: v.Action, ExpiresAt: v.ExpiresAt, CreatedAt: v.CreatedAt,
	}
}
