package mcpadapter

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// inputStatus shows a working task whose run waits for its person (a confirmation,
// or a workflow's step asking for data) as input_required, with a status message that
// says how to answer: mcp-go knows only that the task's handler has not returned.
func (x *runsExt) inputStatus(ctx context.Context, task *mcp.Task) {
	if task == nil || task.Status != mcp.TaskStatusWorking {
		return
	}
	x.links.mu.Lock()
	tr, ok := x.links.runs[task.TaskId]
	x.links.mu.Unlock()
	if !ok || tr.runID == "" {
		return
	}
	v, err := x.o.Runs.Get(context.WithoutCancel(ctx), tr.principal, tr.runID)
	if err != nil || v.State != runs.StateInputRequired {
		return
	}
	task.Status = mcp.TaskStatusInputRequired
	task.StatusMessage = inputStatusMessage(v)
}

// inputStatusMessage says what an input_required run waits for and how to answer.
func inputStatusMessage(v runs.View) string {
	where := ""
	if v.ApprovalURL != "" {
		where = " at " + v.ApprovalURL + " or"
	}
	if v.Kind == runs.KindWorkflow && v.Paused() {
		return fmt.Sprintf("Flow instance %s waits for its person's input: its questions are in %s's answer; answer them%s with submit_flow_elicitation.",
			v.ID, workflows.FlowToolName(workflows.KindQuery, v.Workflow, 0), where)
	}
	return fmt.Sprintf("Run %s waits for its person's confirmation: give it%s with %s.", v.ID, where, toolSubmitElicitation)
}
