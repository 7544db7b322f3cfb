package mcpadapter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/runs"
)

// pendingQuestion answers the one question a flow instance waits for, read with
// query_flow__approve, and checks the instance shows input_required.
func pendingQuestion(t *testing.T, c *client.Client, instance string) string {
	t.Helper()
	var q flowAnswer
	res := call(t, c, "query_flow__approve", map[string]any{"instance_id": instance})
	structured(t, res, &q)
	if res.IsError || q.Status.State != "input_required" || len(q.Elicitations) != 1 || q.Elicitations[0].ID == "" {
		t.Fatalf("query_flow__approve of %s = %s", instance, text(res))
	}
	return q.Elicitations[0].ID
}

// submitApproval answers a flow instance's question with submit_flow_elicitation.
func submitApproval(t *testing.T, c *client.Client, instance, eid, comments string) {
	t.Helper()
	res := call(t, c, "submit_flow_elicitation", map[string]any{"instance_id": instance, "elicitation_id": eid,
		"response": map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": comments}}})
	if res.IsError {
		t.Fatalf("submit_flow_elicitation = %s", text(res))
	}
}

// TestFlowInputStepInRunAsyncAndTasks: a flow whose step asks its person, started with
// switchboard_run_async or as an MCP task by a client that cannot show forms, waits
// input_required (its run, and its task at tasks/get and tasks/list, whose status
// message names the instance); submit_flow_elicitation resumes it, the run completes
// with the answer, and the task's result is the flow's output.
func TestFlowInputStepInRunAsyncAndTasks(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, approveWorkflow)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		ctx := context.Background()

		// switchboard_run_async.
		res := call(t, c, toolRunAsync, map[string]any{"tool": "run_flow__approve", "arguments": map[string]any{"text": "async"}})
		var started runs.View
		structured(t, res, &started)
		if res.IsError || started.ID == "" {
			t.Fatalf("run_async of run_flow__approve = %s", text(res))
		}
		testwait.Until(t, "the run_async run to wait input_required", func() bool {
			var v runs.View
			structured(t, call(t, c, toolGetRun, map[string]any{"run_id": started.ID}), &v)
			return v.State == runs.StateInputRequired
		})
		submitApproval(t, c, started.ID, pendingQuestion(t, c, started.ID), "async ok")
		if v := e.waitRun(t, e.ann, started.ID); v.State != runs.StateCompleted || !strings.Contains(string(v.Output), `"approval_status":"approved"`) {
			t.Fatalf("the run_async run after the answer = %+v (output %s)", v, v.Output)
		}

		// An MCP task. The Go client's CallTool does not read a CreateTaskResult, so the
		// call is sent raw.
		resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(910)), Method: string(mcp.MethodToolsCall),
			Params: map[string]any{"name": "run_flow__approve", "arguments": map[string]any{"text": "tasked"}, "task": map[string]any{}},
		})
		if err != nil || resp.Error != nil {
			t.Fatalf("task-augmented call: %v %+v", err, resp)
		}
		var created mcp.CreateTaskResult
		if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
			t.Fatalf("task-augmented call answered %s (%v)", resp.Result, err)
		}
		var task mcp.GetTaskResult
		testwait.Until(t, "tasks/get to say input_required", func() bool {
			got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: created.Task.TaskId}})
			if err != nil {
				t.Fatalf("tasks/get: %v", err)
			}
			task = *got
			return task.Status == mcp.TaskStatusInputRequired
		})
		var list struct {
			Runs []runs.View `json:"runs"`
		}
		structured(t, call(t, c, toolListRuns, map[string]any{"state": "input_required"}), &list)
		if len(list.Runs) != 1 {
			t.Fatalf("input_required runs = %+v", list.Runs)
		}
		instance := list.Runs[0].ID
		if !strings.Contains(task.StatusMessage, instance) || !strings.Contains(task.StatusMessage, "submit_flow_elicitation") {
			t.Errorf("the task's status message = %q; want it to name %s and submit_flow_elicitation", task.StatusMessage, instance)
		}
		tasks, err := c.ListTasks(ctx, mcp.ListTasksRequest{})
		if err != nil || len(tasks.Tasks) != 1 || tasks.Tasks[0].Status != mcp.TaskStatusInputRequired {
			t.Errorf("tasks/list = %+v, %v", tasks, err)
		}
		submitApproval(t, c, instance, pendingQuestion(t, c, instance), "tasked ok")
		result, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: created.Task.TaskId}})
		if err != nil {
			t.Fatalf("tasks/result: %v", err)
		}
		var ans flowAnswer
		raw, _ := json.Marshal(result.StructuredContent)
		if err := json.Unmarshal(raw, &ans); err != nil || result.IsError || ans.Status.State != "completed" || ans.Output["approval_status"] != "approved" || ans.Output["id"] == nil {
			t.Fatalf("the task's result = %s", raw)
		}
		got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: created.Task.TaskId}})
		if err != nil || got.Status != mcp.TaskStatusCompleted {
			t.Errorf("tasks/get once answered = %+v, %v", got, err)
		}
	})
}
