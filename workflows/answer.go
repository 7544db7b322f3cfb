package workflows

import (
	"context"
	"encoding/json"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// ResultSchema is the output schema of every workflow's tool: how its run ended, or
// where it is when it has not ended within the call.
const ResultSchema = `{"type":"object","properties":{` +
	`"status":{"type":"string","enum":["success","failed","partial","canceled","working","input_required"],"description":"How the run ended, or where it is when it has not ended within the call"},` +
	`"workflow_id":{"type":"string","description":"The run's id: follow it with switchboard_get_run, stop it with cancel_workflow"},` +
	`"steps_completed":{"type":"integer"},"steps_total":{"type":"integer"},` +
	`"step_results":{"type":"array","items":{"type":"object","properties":{"step_name":{"type":"string"},"status":{"type":"string"},"output":{},"duration":{"type":"integer","description":"Milliseconds"},"execution_time":{"type":"string","format":"date-time"},"error_message":{"type":"string"}}}},` +
	`"outputs":{"type":"object"},"error_message":{"type":"string"},"message":{"type":"string"},"plan":{"type":"object"}},"required":["status"]}`

// Answer is a workflow run as its tool answers it (ResultSchema).
type Answer struct {
	Status         string         `json:"status"`
	WorkflowID     string         `json:"workflow_id"`
	StepsCompleted *int           `json:"steps_completed,omitempty"`
	StepsTotal     *int           `json:"steps_total,omitempty"`
	StepResults    []StepStatus   `json:"step_results,omitempty"`
	Outputs        map[string]any `json:"outputs,omitempty"`
	ErrorMessage   string         `json:"error_message,omitempty"`
	Message        string         `json:"message,omitempty"`
	// IsError says the run ended failed, canceled or partial (EndedInError).
	IsError bool `json:"-"`
}

// Answer renders one of the principal's workflow runs as the workflow tools answer it:
// how it ended with its steps and outputs, or where it waits and what to do about it.
func (s *Service) Answer(ctx context.Context, p switchboard.Principal, v runs.View) Answer {
	out := Answer{WorkflowID: v.ID, IsError: EndedInError(v)}
	if st, err := s.Status(ctx, p, v.ID); err == nil {
		out.StepsCompleted, out.StepsTotal, out.StepResults = &st.StepsCompleted, &st.StepsTotal, st.Steps
	}
	switch v.State {
	case runs.StateCompleted:
		var res Result
		_ = json.Unmarshal(v.Output, &res)
		out.Status, out.Outputs = res.Status, res.Outputs
	case runs.StateFailed:
		out.Status = "failed"
	case runs.StateCanceled:
		out.Status = "canceled"
	case runs.StateInputRequired:
		out.Status = "input_required"
		msg := "the run waits for a person's confirmation; relay their answer with switchboard_submit_elicitation"
		if v.ApprovalURL != "" {
			msg += "; or approve it at " + v.ApprovalURL
		}
		if pol, err := s.Router.Policy(ctx, p); err == nil && pol.Approval == router.ApprovalPerson {
			msg = "only a signed-in person may approve it: ask them to approve or decline it at " + v.ApprovalURL + "; do not approve it yourself"
		}
		if v.Elicitation != nil {
			msg = v.Elicitation.Message + " (" + msg + ")"
		}
		out.Message = msg
	default:
		out.Status = string(v.State)
		out.Message = "still running: follow it with switchboard_get_run, stop it with cancel_workflow"
	}
	if v.Error != nil {
		out.ErrorMessage = v.Error.Message
	}
	return out
}
