package hub

import (
	"context"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// Names of the flow instances' management tools.
const (
	ListFlows  = "list_flows"
	CancelFlow = "cancel_flow"
)

// ListFlowsInput is the input of list_flows.
type ListFlowsInput struct {
	Name   string  `json:"name,omitempty" jsonschema:"Only instances of this flow"`
	State  string  `json:"state,omitempty" jsonschema:"Only instances in this state" schema:"enum=working|input_required|completed|failed|canceled"`
	Cursor *string `json:"cursor,omitempty" jsonschema:"The previous page's next_cursor; omit for the first page"`
}

// FlowList is the answer of list_flows.
type FlowList struct {
	Flows      []workflows.FlowStatus `json:"flows" jsonschema:"Your flow instances, newest first, each as its status"`
	NextCursor string                 `json:"next_cursor,omitempty" jsonschema:"Cursor of the next page; absent on the last"`
}

// CancelFlowInput is the input of cancel_flow.
type CancelFlowInput struct {
	InstanceID string `json:"instance_id" jsonschema:"The flow instance to cancel"`
	Reason     string `json:"reason,omitempty" jsonschema:"Why, recorded on the instance"`
}

func (t *Tools) listFlows() providers.Op {
	return &providers.Operation[ListFlowsInput, FlowList]{
		Name: ListFlows, Title: "List your flow instances",
		Description: "List the flow instances you started (runs of saved workflows), newest first, each as query_flow__<name> answers its status.",
		Hints:       providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in ListFlowsInput) (FlowList, error) {
			o := runs.ListOptions{Kind: runs.KindWorkflow, Workflow: in.Name, State: runs.State(in.State)}
			if in.Cursor != nil {
				o.Cursor = *in.Cursor
			}
			vs, next, err := t.Runs.List(ctx, c.Principal, o)
			if err != nil {
				return FlowList{}, err
			}
			out := FlowList{Flows: make([]workflows.FlowStatus, 0, len(vs)), NextCursor: next}
			for _, v := range vs {
				out.Flows = append(out.Flows, workflows.StatusOf(v))
			}
			return out, nil
		},
	}
}

func (t *Tools) cancelFlow() providers.Op {
	return &providers.Operation[CancelFlowInput, workflows.FlowStatus]{
		Name: CancelFlow, Title: "Cancel a flow instance",
		Description: "Cancel a flow instance you started: its steps in flight stop and no more start; the reason is recorded. An instance that had finished is left as it is, and its status says how it ended.",
		Hints:       providers.Hints{Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in CancelFlowInput) (workflows.FlowStatus, error) {
			if strings.TrimSpace(in.InstanceID) == "" {
				return workflows.FlowStatus{}, switchboard.Invalid("instance_id", "is required")
			}
			v, err := t.Workflows.CancelBecause(ctx, c.Principal, in.InstanceID, in.Reason)
			if switchboard.CodeOf(err) == switchboard.CodeConflict {
				st, serr := t.Workflows.Status(ctx, c.Principal, in.InstanceID)
				if serr != nil {
					return workflows.FlowStatus{}, err
				}
				return workflows.StatusOf(st.Run), nil
			}
			if err != nil {
				return workflows.FlowStatus{}, err
			}
			return workflows.StatusOf(v), nil
		},
	}
}
