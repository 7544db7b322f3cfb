package hub

import (
	"context"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// Names of the tools that answer what a flow instance's steps ask its person.
const (
	SubmitFlowElicitation        = "submit_flow_elicitation"
	ReplayFlowPendingElicitation = "replay_flow_pending_elicitation"
)

// SubmitFlowElicitationInput is the input of submit_flow_elicitation.
type SubmitFlowElicitationInput struct {
	InstanceID    string                        `json:"instance_id" jsonschema:"The flow instance that waits for the answer"`
	ElicitationID string                        `json:"elicitation_id" jsonschema:"The question's elicitation_id, as the flow's input_required answer or replay_flow_pending_elicitation gave it"`
	Response      workflows.ElicitationResponse `json:"response" jsonschema:"The person's answer: action accept with content, or decline or cancel"`
}

// ReplayFlowInput is the input of replay_flow_pending_elicitation.
type ReplayFlowInput struct {
	InstanceID string `json:"instance_id" jsonschema:"The flow instance whose pending questions to show again"`
}

func (t *Tools) submitFlowElicitation() providers.Op {
	return &providers.Operation[SubmitFlowElicitationInput, workflows.FlowStatus]{
		Name: SubmitFlowElicitation, Title: "Answer a flow's question",
		Description: "Answer a question a step of one of your flow instances asks its person (also one that timed out): the answer is checked against the question's schema and the flow resumes. Decline or cancel fail the step. Answers with the instance's status.",
		Hints:       providers.Hints{ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in SubmitFlowElicitationInput) (workflows.FlowStatus, error) {
			v, err := t.Workflows.SubmitElicitation(ctx, c.Principal, in.InstanceID, in.ElicitationID, in.Response, "submit_flow_elicitation")
			if err != nil {
				return workflows.FlowStatus{}, err
			}
			return workflows.StatusOf(v), nil
		},
	}
}

func (t *Tools) replayFlowPendingElicitation() providers.Op {
	return &providers.Operation[ReplayFlowInput, workflows.Replayed]{
		Name: ReplayFlowPendingElicitation, Title: "Show a flow's pending questions again",
		Description: "Put the questions one of your flow instances waits for to you again (your client's form, where it can show one); each answer resumes the flow. Questions left unanswered are returned with their schemas, to answer with submit_flow_elicitation.",
		Hints:       providers.Hints{ClosedWorld: true},
		Run: func(ctx context.Context, c *providers.Call, in ReplayFlowInput) (workflows.Replayed, error) {
			return t.Workflows.ReplayElicitations(ctx, c.Principal, in.InstanceID)
		},
	}
}
