package mcpadapter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/runs"
)

// ended polls tasks/get until the task reached a final status.
func (c modernClient) ended(id string) map[string]any {
	c.t.Helper()
	var got map[string]any
	testwait.Until(c.t, "task "+id+" to end", func() bool {
		got = c.result("tasks/get", map[string]any{"taskId": id})
		switch got["status"] {
		case "completed", "failed", "cancelled":
			return true
		}
		return false
	})
	return got
}

// created checks a tools/call answered a flat CreateTaskResult, working, and returns its id.
func created(t *testing.T, tool string, res map[string]any) string {
	t.Helper()
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || res["status"] != "working" || res["content"] != nil {
		t.Fatalf("%s from a client that takes tasks = %v, want a CreateTaskResult (a task id, working)", tool, res)
	}
	return id
}

// direct checks a tools/call answered directly (no task) and returns the result.
func direct(t *testing.T, tool string, res map[string]any) map[string]any {
	t.Helper()
	if res["resultType"] != "complete" || res["taskId"] != nil || res["content"] == nil {
		t.Fatalf("%s = %v, want its direct answer", tool, res)
	}
	return res
}

// flowShape is a flow tool's result with its run's and note's ids replaced, so that
// two runs' answers compare: content, structuredContent and isError.
func flowShape(t *testing.T, res any) string {
	t.Helper()
	m, _ := res.(map[string]any)
	sc, _ := m["structuredContent"].(map[string]any)
	status, _ := sc["status"].(map[string]any)
	output, _ := sc["output"].(map[string]any)
	run, _ := status["instance_id"].(string)
	note, _ := output["id"].(string)
	if run == "" || note == "" {
		t.Fatalf("flow result %v has no instance_id or output id", res)
	}
	delete(status, "created_at")
	delete(status, "updated_at")
	raw, _ := json.Marshal(map[string]any{"content": m["content"], "structuredContent": sc, "isError": m["isError"]})
	return strings.NewReplacer(run, "RUN", note, "NOTE").Replace(string(raw))
}

// workflowShape is run_workflow's result reduced to what two runs share: its status,
// isError and its steps' names and statuses.
func workflowShape(t *testing.T, res any) string {
	t.Helper()
	m, _ := res.(map[string]any)
	var ans workflowAnswer
	raw, _ := json.Marshal(m["structuredContent"])
	if err := json.Unmarshal(raw, &ans); err != nil || ans.WorkflowID == "" {
		t.Fatalf("run_workflow result %v has no workflow_id (%v)", res, err)
	}
	ans.WorkflowID = ""
	shape, _ := json.Marshal(map[string]any{"answer": ans, "isError": m["isError"], "blocks": len(m["content"].([]any))})
	return string(shape)
}

// TestFlowToolsRunAsModernTasks: on 2026-07-28 the tools that run a workflow and wait
// for it (run_flow__<name>, workflow_<name>, run_workflow) are listed optional and
// become tasks for a client that declared the tasks extension: a CreateTaskResult at
// once, then tasks/get shows the result a direct call answers. A step asking its person
// shows as the task's input request, answered with tasks/update. A client without the
// extension, and any 2025-11-25 client, gets the direct answer as before (and, when it
// asks for a task, run_workflow's result as the call answers it); the tools that answer
// at once stay direct.
func TestFlowToolsRunAsModernTasks(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, noteWorkflow, approveWorkflow)
		url := e.srv.URL + "/mcp/" + e.ann.TenantSlug
		plain := modernClient{t: t, url: url}
		c := modernClient{t: t, url: url, tasks: true}

		support := map[string]any{}
		for _, tool := range c.result("tools/list", nil)["tools"].([]any) {
			m := tool.(map[string]any)
			ex, _ := m["execution"].(map[string]any)
			support[m["name"].(string)] = ex["taskSupport"]
		}
		for _, name := range []string{"run_flow__note", "workflow_note", "run_workflow"} {
			if support[name] != "optional" {
				t.Errorf("tools/list: %s taskSupport = %v, want optional", name, support[name])
			}
		}

		// run_flow__note: direct without the extension, a task with it, the same result.
		want := flowShape(t, direct(t, "run_flow__note", plain.call("run_flow__note", map[string]any{"text": "direct"})))
		id := created(t, "run_flow__note", c.call("run_flow__note", map[string]any{"text": "direct"}))
		done := c.ended(id)
		if done["status"] != "completed" || done["resultType"] != "complete" {
			t.Fatalf("run_flow__note task = %v, want completed", done)
		}
		if got := flowShape(t, done["result"]); got != want {
			t.Errorf("run_flow__note task result = %s, want the direct call's %s", got, want)
		}
		if run := done["result"].(map[string]any)["structuredContent"].(map[string]any)["status"].(map[string]any)["instance_id"]; run != id {
			t.Errorf("run_flow__note task's instance_id = %v, want the task's id %s (the task is the flow's run)", run, id)
		}
		// workflow_<name> waits alike.
		done = c.ended(created(t, "workflow_note", c.call("workflow_note", map[string]any{"text": "alias"})))
		if r, _ := done["result"].(map[string]any); done["status"] != "completed" || r["isError"] == true || !strings.Contains(resultText(r), `"status":"success"`) {
			t.Errorf("workflow_note task = %v, want completed with the workflow's success", done)
		}
		// The tools that answer at once stay direct.
		direct(t, "run_flow_async__note", c.call("run_flow_async__note", map[string]any{"text": "async"}))

		// A step asking its person: the task's input request, answered with tasks/update.
		id = created(t, "run_flow__approve", c.call("run_flow__approve", map[string]any{"text": "x"}))
		var waiting map[string]any
		testwait.Until(t, "the flow's question as the task's input request", func() bool {
			waiting = c.result("tasks/get", map[string]any{"taskId": id})
			reqs, _ := waiting["inputRequests"].(map[string]any)
			return len(reqs) == 1
		})
		var key string
		var req map[string]any
		for k, v := range waiting["inputRequests"].(map[string]any) {
			key, req = k, v.(map[string]any)
		}
		params, _ := req["params"].(map[string]any)
		if waiting["status"] != "input_required" || req["method"] != "elicitation/create" || params["message"] != "Write x?" || params["requestedSchema"] == nil {
			t.Fatalf("tasks/get of the asking flow = %v, want input_required with its question as an elicitation/create", waiting)
		}
		bad := c.post("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"approval_status": "maybe", "comments": "c"}}}}, nil)
		if e, _ := bad["error"].(map[string]any); rpcCode(bad) != mcp.INVALID_PARAMS || !strings.Contains(e["message"].(string), "inputResponses."+key) {
			t.Errorf("tasks/update with an answer off the question's schema = %v, want -32602 naming inputResponses.%s", bad, key)
		}
		ack := c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "tasked ok"}}}})
		if len(ack) != 1 || ack["resultType"] != "complete" {
			t.Errorf("tasks/update = %v, want an empty ack", ack)
		}
		done = c.ended(id)
		var ans flowAnswer
		raw, _ := json.Marshal(done["result"].(map[string]any)["structuredContent"])
		if err := json.Unmarshal(raw, &ans); err != nil || done["status"] != "completed" || ans.Status.State != "completed" || ans.Output["approval_status"] != "approved" || ans.Output["id"] == nil {
			t.Errorf("the answered flow's task = %v, want completed with the flow's output", done)
		}

		// run_workflow: direct without the extension, a task with it, the same result.
		args := map[string]any{"workflow_name": "note", "parameters": map[string]any{"text": "rw"}}
		want = workflowShape(t, direct(t, "run_workflow", plain.call("run_workflow", args)))
		done = c.ended(created(t, "run_workflow", c.call("run_workflow", args)))
		if done["status"] != "completed" {
			t.Fatalf("run_workflow task = %v, want completed", done)
		}
		if got := workflowShape(t, done["result"]); got != want {
			t.Errorf("run_workflow task result = %s, want the direct call's %s", got, want)
		}
		// Its workflow's question is the task's input request too.
		id = created(t, "run_workflow", c.call("run_workflow", map[string]any{"workflow_name": "approve", "parameters": map[string]any{"text": "y"}}))
		testwait.Until(t, "run_workflow's question as the task's input request", func() bool {
			waiting = c.result("tasks/get", map[string]any{"taskId": id})
			reqs, _ := waiting["inputRequests"].(map[string]any)
			return len(reqs) == 1
		})
		for k, v := range waiting["inputRequests"].(map[string]any) {
			key, req = k, v.(map[string]any)
		}
		if params, _ := req["params"].(map[string]any); waiting["status"] != "input_required" || params["message"] != "Write y?" {
			t.Fatalf("tasks/get of run_workflow's asking flow = %v, want input_required with its question", waiting)
		}
		c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "rw ok"}}}})
		if done = c.ended(id); done["status"] != "completed" || !strings.Contains(resultText(done["result"]), `"status":"success"`) {
			t.Errorf("run_workflow's answered task = %v, want completed with the workflow's success", done)
		}

		// A 2025-11-25 client's calls answer directly, as before.
		old := e.connect(t, e.ann, keyAnn, "2025-11-25", nil)
		var flow flowAnswer
		res := call(t, old, "run_flow__note", map[string]any{"text": "old"})
		structured(t, res, &flow)
		if res.IsError || flow.Status.State != "completed" {
			t.Errorf("run_flow__note on 2025-11-25 = %s, want its completed flow", text(res))
		}
		var wf workflowAnswer
		res = call(t, old, "run_workflow", args)
		structured(t, res, &wf)
		if res.IsError || wf.Status != "success" {
			t.Errorf("run_workflow on 2025-11-25 = %s, want its workflow's success", text(res))
		}
		// Its task, when one is asked for, answers the workflow's result as the call does.
		tr, err := old.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: startTask(t, old, 990, "run_workflow", args)}})
		if err != nil {
			t.Fatal(err)
		}
		wf = workflowAnswer{}
		raw, _ = json.Marshal(tr.StructuredContent)
		if err := json.Unmarshal(raw, &wf); err != nil || tr.IsError || wf.Status != "success" || wf.WorkflowID == "" {
			t.Errorf("run_workflow's task result on 2025-11-25 = %s, want the workflow's result", raw)
		}
	})
}

// TestRunWorkflowTaskWaitsForTheEnd: run_workflow called directly answers "still
// running" once the Service's ToolWait passed; as a task it waits for the workflow's
// end, however long it takes (holding one of the tenant's run slots, not two), and
// cancelling the task cancels the workflow's run.
func TestRunWorkflowTaskWaitsForTheEnd(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.workflows.ToolWait = time.Nanosecond // a direct call gives up on it at once
		e.saveWorkflows(t, holdWorkflow)
		url := e.srv.URL + "/mcp/" + e.ann.TenantSlug
		c := modernClient{t: t, url: url, tasks: true}
		plain := modernClient{t: t, url: url}
		args := map[string]any{"workflow_name": "hold"}
		if res := direct(t, "run_workflow", plain.call("run_workflow", args)); !strings.Contains(resultText(res), `"status":"working"`) {
			t.Fatalf("direct run_workflow past its ToolWait = %v, want the workflow still running", res)
		}
		id := created(t, "run_workflow", c.call("run_workflow", args))
		testwait.Recv(t, e.up.Waiting(), "the direct call's step to reach the upstream")
		testwait.Recv(t, e.up.Waiting(), "the task's step to reach the upstream")
		if got := c.result("tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Errorf("run_workflow task while its workflow runs = %v, want working", got)
		}
		// Cancelling the task cancels its workflow's run.
		canceled := created(t, "run_workflow", c.call("run_workflow", args))
		testwait.Recv(t, e.up.Waiting(), "the canceled task's step to reach the upstream")
		c.result("tasks/cancel", map[string]any{"taskId": canceled})
		if got := c.ended(canceled); got["status"] != "cancelled" {
			t.Errorf("canceled run_workflow task = %v, want cancelled", got)
		}
		testwait.Until(t, "the canceled task's workflow run to end canceled", func() bool {
			list, _, err := e.exec.List(context.Background(), e.ann, runs.ListOptions{Workflow: "hold"})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range list {
				if v.State == runs.StateCanceled {
					return true
				}
			}
			return false
		})
		e.up.Release()
		if done := c.ended(id); done["status"] != "completed" || !strings.Contains(resultText(done["result"]), `"status":"success"`) {
			t.Errorf("run_workflow task = %v, want completed with the workflow's success", done)
		}
	})
}
