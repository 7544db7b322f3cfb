package hub

import (
	"context"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// SubscribeFlow is the name of the tool that subscribes the caller's MCP session to a
// flow instance's changes.
const SubscribeFlow = "subscribe_flow"

// SubscribeFlowInput is the input of subscribe_flow.
type SubscribeFlowInput struct {
	InstanceID string `json:"instance_id" jsonschema:"The flow instance to follow: the instance_id run_flow_async__<name> answered"`
}

// FlowSubscription is the answer of subscribe_flow.
type FlowSubscription struct {
	URI        string               `json:"uri" jsonschema:"The instance's resource: resources/read answers its status and output; resources/subscribe to it hears of every change of its state"`
	Subscribed bool                 `json:"subscribed" jsonschema:"Whether this MCP session now receives notifications/resources/updated for the resource on every change of the instance's state"`
	Status     workflows.FlowStatus `json:"status" jsonschema:"The instance's status now"`
	Message    string               `json:"message" jsonschema:"What follows, or how to subscribe where this call could not"`
}

func (t *Tools) subscribeFlow() providers.Op {
	return &providers.Operation[SubscribeFlowInput, FlowSubscription]{
		Name: SubscribeFlow, Title: "Follow a flow instance",
		Description: "Subscribe this MCP session to a flow instance you started: it then receives notifications/resources/updated for the instance's resource (switchboard://flows/<instance_id>) on every change of its state, wherever the flow runs; read the resource, or call query_flow__<name>, for the new status and output. resources/unsubscribe on the resource stops them.",
		Hints:       providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in SubscribeFlowInput) (FlowSubscription, error) {
			id := strings.TrimSpace(in.InstanceID)
			if id == "" {
				return FlowSubscription{}, switchboard.Invalid("instance_id", "is required")
			}
			// Only the one who started it may follow it: another's instance is not found,
			// as a missing one is.
			ans, err := t.Workflows.Instance(ctx, c.Principal, id)
			if err != nil {
				return FlowSubscription{}, err
			}
			out := FlowSubscription{URI: workflows.InstanceURI(id), Status: ans.Status}
			sub, ok := providers.CallerFrom(ctx).(providers.Subscriber)
			if !ok {
				out.Message = "This call came without an MCP session to subscribe (REST, or a background run): subscribe to " + out.URI + " from an MCP session (resources/subscribe, or subscriptions/listen on 2026-07-28), or poll query_flow__" + ans.Status.Name + "."
				return out, nil
			}
			if err := sub.SubscribeResource(ctx, out.URI); err != nil {
				out.Message = "This session was not subscribed: " + err.Error()
				return out, nil
			}
			out.Subscribed = true
			out.Message = "This session receives notifications/resources/updated for " + out.URI + " on every change of the instance's state; resources/unsubscribe stops them."
			return out, nil
		},
	}
}
