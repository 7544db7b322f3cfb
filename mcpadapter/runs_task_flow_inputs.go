package mcpadapter

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// A 2026-07-28 task whose run is a workflow's (run_flow__<name> and the like start the
// workflow's own run) pauses when one of its steps asks its person for data. The
// questions are kept with the run's steps, so every node shows them alike: tasks/get
// lists each as an elicitation/create input request keyed by its elicitation id, and
// tasks/update answers it as submit_flow_elicitation would.

// pausedFlow reports whether a run is a workflow's waiting for its person's answers,
// whose questions this node can read.
func (x *runsExt) pausedFlow(v runs.View) bool {
	return x.o.Flows != nil && v.Kind == runs.KindWorkflow && v.Paused()
}

// flowInputRequests are the questions a paused workflow run waits for, as a task's
// inputRequests (nil when none can be read).
func (x *runsExt) flowInputRequests(ctx context.Context, p switchboard.Principal, v runs.View) map[string]any {
	_, pending, err := x.o.Flows.Elicitations(ctx, p, v.ID)
	if err != nil {
		x.o.Logger.ErrorContext(ctx, "read a task's flow questions", "task", v.ID, "err", err)
		return nil
	}
	if len(pending) == 0 {
		return nil
	}
	out := make(map[string]any, len(pending))
	for _, e := range pending {
		var schema map[string]any
		_ = json.Unmarshal(e.Schema, &schema)
		out[e.ID] = map[string]any{"method": string(mcp.MethodElicitationCreate),
			"params": mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: e.Message, RequestedSchema: schema}}
	}
	return out
}

// answerFlowInputs answers the questions of a paused workflow run that responses hold
// an answer to (keyed by elicitation id; other keys are ignored), each an elicitation
// result: accept with the form's content, decline or cancel.
func (x *runsExt) answerFlowInputs(ctx context.Context, p switchboard.Principal, v runs.View, responses map[string]json.RawMessage) error {
	_, pending, err := x.o.Flows.Elicitations(ctx, p, v.ID)
	if err != nil {
		return err
	}
	for _, e := range pending {
		raw, ok := responses[e.ID]
		if !ok {
			continue
		}
		var resp workflows.ElicitationResponse
		if err := json.Unmarshal(raw, &resp); err != nil || resp.Action == "" {
			return switchboard.Invalid("inputResponses."+e.ID, "must be an elicitation result with an action (accept, decline or cancel) and, with accept, its content")
		}
		if _, err := x.o.Flows.SubmitElicitation(context.WithoutCancel(ctx), p, v.ID, e.ID, resp, "tasks/update"); err != nil {
			if se := switchboard.AsError(err); se.Field != "" && se.Code == switchboard.CodeInvalid {
				return switchboard.Invalid("inputResponses."+e.ID+"."+strings.TrimPrefix(se.Field, "response."), se.Message)
			}
			return err
		}
	}
	return nil
}
