package workflows

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// ResultSchema is the output schema of run_workflow (and of workflow_<name>): how the
// run ended, or where it is when it has not ended within the call. Times are in
// seconds.
const ResultSchema = `{"type":"object","properties":{` +
	`"status":{"type":"string","enum":["success","failed","partial","canceled","working","input_required"],"description":"Overall status: success, failed or partial once it ended, or where it is when it has not ended within the call"},` +
	`"workflow_id":{"type":"string","description":"Unique identifier of this execution: follow it with switchboard_get_run, stop it with cancel_workflow"},` +
	`"steps_completed":{"type":"integer","description":"Number of steps completed"},"steps_total":{"type":"integer","description":"Total number of steps"},` +
	`"step_results":{"type":"array","description":"Results from each step","items":{"type":"object","properties":{"step_name":{"type":"string","description":"Name of the step"},"status":{"type":"string","description":"Step status"},"output":{"description":"Step output data"},"duration":{"type":"number","description":"Step execution time in seconds"},"started_at":{"type":"string","format":"date-time"},"error_message":{"type":"string"}}}},` +
	`"execution_time":{"type":"number","description":"Total execution time in seconds"},` +
	`"outputs":{"type":"object"},"error_message":{"type":"string","description":"Error details if status is failed"},"message":{"type":"string"},"plan":{"type":"object"}},"required":["status"]}`

// Answer is a workflow run as its tool answers it (ResultSchema).
type Answer struct {
	Status         string       `json:"status"`
	WorkflowID     string       `json:"workflow_id"`
	StepsCompleted int          `json:"steps_completed"`
	StepsTotal     int          `json:"steps_total"`
	StepResults    []StepStatus `json:"step_results"`
	// ExecutionTime is how long the run took, in seconds (so far, while it runs).
	ExecutionTime float64        `json:"execution_time"`
	Outputs       map[string]any `json:"outputs,omitempty"`
	ErrorMessage  string         `json:"error_message,omitempty"`
	Message       string         `json:"message,omitempty"`
	// IsError says the run ended failed, canceled or partial (EndedInError).
	IsError bool `json:"-"`
}

// runTime is how long a run took, in seconds: from its start (else its creation) to
// its end, or to now while it has not ended.
func runTime(v runs.View, now time.Time) float64 {
	from := v.CreatedAt
	if v.StartedAt != nil {
		from = *v.StartedAt
	}
	to := now
	if v.FinishedAt != nil {
		to = *v.FinishedAt
	}
	if to.Before(from) {
		return 0
	}
	return seconds(to.Sub(from))
}

// Answer renders one of the principal's workflow runs as the workflow tools answer it:
// how it ended with its steps and outputs, or where it waits and what to do about it.
func (s *Service) Answer(ctx context.Context, p switchboard.Principal, v runs.View) Answer {
	out := Answer{WorkflowID: v.ID, IsError: EndedInError(v), StepResults: []StepStatus{}, ExecutionTime: runTime(v, time.Now())}
	if st, err := s.Status(ctx, p, v.ID); err == nil {
		out.StepsCompleted, out.StepsTotal = st.StepsCompleted, st.StepsTotal
		if st.Steps != nil {
			out.StepResults = st.Steps
		}
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
		if v.Paused() {
			_, pending, _ := s.Elicitations(ctx, p, v.ID)
			msg = waitingText(pending, v.ApprovalURL)
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
