package mcpadapter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/workflows"
)

// saveWorkflows saves workflows as ann, each step on alpha's notes connection.
func (e *runsEnv) saveWorkflows(t *testing.T, sources ...string) {
	t.Helper()
	for _, src := range sources {
		src = strings.ReplaceAll(src, "CONN", e.connA)
		def, err := workflows.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.workflows.Create(context.Background(), e.ann, def, src, false); err != nil {
			t.Fatalf("save %s: %v", def.Name, err)
		}
	}
}

const (
	noteWorkflow = "name: note\nparameters: {type: object, properties: {text: {type: string}}, required: [text]}\n" +
		"steps:\n  - {name: write, tool: notes_create_note, connection: CONN, args: {text: \"${{ params.text }}\"}}\n" +
		"outputs: {id: \"${{ steps.write.output.id }}\"}\n"
	holdWorkflow    = "name: hold\nsteps:\n  - {name: wait, tool: notes_wait, connection: CONN}\n"
	failedWorkflow  = "name: failing\nsteps:\n  - {name: missing, tool: notes_get_note, connection: CONN, args: {id: missing}}\n"
	partialWorkflow = "name: halfway\nsteps:\n  - {name: missing, tool: notes_get_note, connection: CONN, args: {id: missing}, on_error: continue}\n" +
		"  - {name: write, tool: notes_create_note, connection: CONN, args: {text: after}}\n"
)

// workflowAnswer is a workflow tool's structured result.
type workflowAnswer struct {
	Status      string `json:"status"`
	WorkflowID  string `json:"workflow_id"`
	StepResults []struct {
		StepName string `json:"step_name"`
		Status   string `json:"status"`
	} `json:"step_results"`
}

// TestWorkflowToolsRunAsync: switchboard_run_async starts a workflow tool like any
// other and answers its run at once; the run tools follow and cancel it.
func TestWorkflowToolsRunAsync(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, noteWorkflow, holdWorkflow)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)

		res := call(t, c, toolRunAsync, map[string]any{"tool": "workflow_note", "arguments": map[string]any{"text": "later"}})
		if res.IsError {
			t.Fatalf("run_async of workflow_note: %s", text(res))
		}
		var started runs.View
		structured(t, res, &started)
		if started.State != runs.StateWorking || !strings.HasPrefix(started.ID, "run_") || started.Tool != "workflow_note" {
			t.Fatalf("run_async answered %+v", started)
		}
		e.waitRun(t, e.ann, started.ID)
		got := call(t, c, toolGetRun, map[string]any{"run_id": started.ID})
		var done runs.View
		structured(t, got, &done)
		if got.IsError || done.State != runs.StateCompleted || !strings.Contains(string(done.Output), `"status":"success"`) {
			t.Fatalf("get_run = isError %t, %+v (output %s)", got.IsError, done, done.Output)
		}
		if reqs := e.up.Requests(); len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Body != `{"text":"later"}` {
			t.Errorf("upstream got %+v", reqs)
		}

		if bad := call(t, c, toolRunAsync, map[string]any{"tool": "workflow_note", "arguments": map[string]any{}}); !bad.IsError || !strings.Contains(text(bad), "parameters.text") {
			t.Errorf("run_async without the workflow's parameter: isError %t, %q", bad.IsError, text(bad))
		}

		res = call(t, c, toolRunAsync, map[string]any{"tool": "workflow_hold"})
		var held runs.View
		structured(t, res, &held)
		if res.IsError || held.State != runs.StateWorking {
			t.Fatalf("run_async of workflow_hold: %s", text(res))
		}
		testwait.Recv(t, e.up.Waiting(), "the workflow's step to reach the upstream")
		canceled := call(t, c, toolCancelRun, map[string]any{"run_id": held.ID})
		var cv runs.View
		structured(t, canceled, &cv)
		if canceled.IsError || cv.State != runs.StateCanceled {
			t.Fatalf("cancel_run = %s", text(canceled))
		}
		e.waitRun(t, e.ann, held.ID)
		if got := call(t, c, toolGetRun, map[string]any{"run_id": held.ID}); !got.IsError || !strings.Contains(text(got), `"state":"canceled"`) {
			t.Errorf("get_run of the canceled workflow run: isError %t, %s", got.IsError, text(got))
		}
	})
}

// TestWorkflowToolsAnswerIsErrorUnlessTheySucceed: a workflow that failed or ended
// partial answers isError with its status and step results, at its own tool, at
// switchboard_get_run and as the result of an MCP task; one that succeeded does not.
func TestWorkflowToolsAnswerIsErrorUnlessTheySucceed(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, noteWorkflow, failedWorkflow, partialWorkflow)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		tasks := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		tests := []struct {
			name, tool string
			args       map[string]any
			isError    bool
			status     string
			steps      int
		}{
			{name: "success", tool: "workflow_note", args: map[string]any{"text": "ok"}, status: "success", steps: 1},
			{name: "failed", tool: "workflow_failing", args: map[string]any{}, isError: true, status: "failed", steps: 1},
			{name: "partial", tool: "workflow_halfway", args: map[string]any{}, isError: true, status: "partial", steps: 2},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := call(t, c, tt.tool, tt.args)
				var got workflowAnswer
				structured(t, res, &got)
				if res.IsError != tt.isError || got.Status != tt.status || len(got.StepResults) != tt.steps {
					t.Errorf("%s = isError %t, %s; want isError %t, status %s with %d steps", tt.tool, res.IsError, text(res), tt.isError, tt.status, tt.steps)
				}
				if fetched := call(t, c, toolGetRun, map[string]any{"run_id": got.WorkflowID}); fetched.IsError != tt.isError {
					t.Errorf("get_run of its run = isError %t, %s; want isError %t", fetched.IsError, text(fetched), tt.isError)
				}
				taskID := startTask(t, tasks, int64(950+i), tt.tool, tt.args)
				tr, err := tasks.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: taskID}})
				if err != nil {
					t.Fatal(err)
				}
				var task workflowAnswer
				raw, _ := json.Marshal(tr.StructuredContent)
				if err := json.Unmarshal(raw, &task); err != nil || tr.IsError != tt.isError || task.Status != tt.status || len(task.StepResults) != tt.steps || task.WorkflowID == got.WorkflowID {
					t.Errorf("task result of %s = isError %t, %s; want isError %t, status %s of a run of its own", tt.tool, tr.IsError, raw, tt.isError, tt.status)
				}
			})
		}
	})
}

// TestCanceledWorkflowAnswersIsError: a workflow canceled while its tool call waits
// answers isError, status canceled.
func TestCanceledWorkflowAnswersIsError(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, holdWorkflow)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		answered := make(chan *mcp.CallToolResult, 1)
		go func() { answered <- call(t, c, "workflow_hold", map[string]any{}) }()
		testwait.Recv(t, e.up.Waiting(), "the workflow's step to reach the upstream")
		list, _, err := e.exec.List(context.Background(), e.ann, runs.ListOptions{Workflow: "hold"})
		if err != nil || len(list) != 1 {
			t.Fatalf("runs of workflow_hold: %+v, %v", list, err)
		}
		if _, err := e.workflows.Cancel(context.Background(), e.ann, list[0].ID); err != nil {
			t.Fatal(err)
		}
		res := testwait.Recv(t, answered, "workflow_hold to answer")
		var got workflowAnswer
		structured(t, res, &got)
		if !res.IsError || got.Status != "canceled" || got.WorkflowID != list[0].ID {
			t.Errorf("workflow_hold canceled = isError %t, %s; want isError, status canceled", res.IsError, text(res))
		}
	})
}

// TestWorkflowRunAsyncAtAnAgentURL: at an agent URL, switchboard_run_async starts only
// the workflows the agent selected.
func TestWorkflowRunAsyncAtAnAgentURL(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ag := &oneAgent{}
		var agentP switchboard.Principal
		e := buildRunsEnv(t, db, ag, func(e *runsEnv) keys {
			ag.agent = &agents.Agent{ID: "agt_writer", TenantID: e.ann.TenantID, Name: "writer", CreatedBy: e.ann.UserID, Version: 1,
				Tools: []agents.Tool{{AgentID: "agt_writer", Tool: "workflow_note", TenantID: e.ann.TenantID},
					{AgentID: "agt_writer", Tool: "notes_create_note", TenantID: e.ann.TenantID, ConnectionID: e.connA}}}
			agentP = switchboard.Principal{TenantID: e.ann.TenantID, TenantSlug: e.ann.TenantSlug, Kind: switchboard.PrincipalAgent, UserID: e.ann.UserID, AgentID: "agt_writer"}
			return keys{"key-agent": agentP}
		}, true)
		e.saveWorkflows(t, noteWorkflow, holdWorkflow)
		c := e.connectTo(t, "/mcp/"+e.ann.TenantSlug+"/agents/agt_writer", "key-agent", mcp.LATEST_PROTOCOL_VERSION, nil)

		if refused := call(t, c, toolRunAsync, map[string]any{"tool": "workflow_hold"}); !refused.IsError || !strings.Contains(text(refused), "not found") {
			t.Errorf("run_async of a workflow the agent did not select: isError %t, %q", refused.IsError, text(refused))
		}
		res := call(t, c, toolRunAsync, map[string]any{"tool": "workflow_note", "arguments": map[string]any{"text": "by the agent"}})
		var started runs.View
		structured(t, res, &started)
		if res.IsError || started.Tool != "workflow_note" {
			t.Fatalf("run_async of the agent's workflow: %q", text(res))
		}
		if got := e.waitRun(t, agentP, started.ID); got.State != runs.StateCompleted {
			t.Errorf("the agent's workflow run = %+v", got)
		}
		for _, req := range e.up.Requests() {
			if req.Method == "GET" && req.Path == "/wait" {
				t.Errorf("the workflow the agent did not select reached the upstream: %+v", req)
			}
		}
	})
}

// TestWorkflowStepsRunWorkflowsAndHubTools: a workflow's step may run another saved
// workflow (its tool) and one of the hub's own tools, as the caller, on no connection;
// a workflow whose step runs itself stops at workflows.MaxDepth, its deepest step
// refused, instead of starting runs without end.
func TestWorkflowStepsRunWorkflowsAndHubTools(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, noteWorkflow,
			"name: outer\nsteps:\n  - {name: inner, tool: workflow_note, args: {text: nested}}\n  - {name: runs, tool: switchboard_list_runs, args: {limit: 5}}\n")
		// A workflow that runs itself: saved first without the loop (its tool must
		// exist before a step can name it), then overwritten to call itself.
		def, _ := workflows.Parse([]byte("name: loop\nsteps:\n  - {name: again, tool: workflow_note, args: {text: once}}\n"))
		if _, _, err := e.workflows.Create(context.Background(), e.ann, def, "", false); err != nil {
			t.Fatal(err)
		}
		def, _ = workflows.Parse([]byte("name: loop\nsteps:\n  - {name: again, tool: workflow_loop}\n"))
		if _, _, err := e.workflows.Create(context.Background(), e.ann, def, "", true); err != nil {
			t.Fatalf("overwrite loop to call itself: %v", err)
		}
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		res := call(t, c, "workflow_outer", map[string]any{})
		var got workflowAnswer
		structured(t, res, &got)
		if res.IsError || got.Status != "success" || len(got.StepResults) != 2 {
			t.Fatalf("workflow_outer = isError %t, %s; want success with its 2 steps", res.IsError, text(res))
		}
		created := 0
		for _, r := range e.up.Requests() {
			if r.Method == "POST" && strings.Contains(r.Body, "nested") {
				created++
			}
		}
		if created != 1 {
			t.Errorf("the nested workflow's note reached the upstream %d times, want once", created)
		}

		res = call(t, c, "workflow_loop", map[string]any{})
		if !res.IsError {
			t.Fatalf("workflow_loop = %s; want it failed", text(res))
		}
		list, _, err := e.exec.List(context.Background(), e.ann, runs.ListOptions{Workflow: "loop", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != workflows.MaxDepth+1 {
			t.Errorf("workflow_loop started %d runs, want %d (nesting stops at the bound)", len(list), workflows.MaxDepth+1)
		}
		deepest := e.waitRun(t, e.ann, list[0].ID) // newest first
		if deepest.Error == nil || !strings.Contains(deepest.Error.Message, "nest at most") {
			t.Errorf("the deepest run = %+v; want it failed saying runs nest at most so deep", deepest)
		}
	})
}

// TestWorkflowRunAsyncTakesThePortableListing: under the portable schema profile a
// workflow tool lists its optional parameter as nullable and switchboard_run_async
// its arguments as JSON text; arguments written so (the optional parameter null) start
// the workflow with its own parameters, the null one left out.
func TestWorkflowRunAsyncTakesThePortableListing(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, "name: tagged\nparameters: {type: object, properties: {text: {type: string}, tag: {type: string}}, required: [text]}\n"+
			"steps:\n  - {name: write, tool: notes_create_note, connection: CONN, args: {text: \"${{ params.text }}\"}}\n")
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		res := call(t, c, toolRunAsync, map[string]any{"tool": "workflow_tagged", "arguments": `{"text":"later","tag":null}`})
		if res.IsError {
			t.Fatalf("run_async of workflow_tagged: %s", text(res))
		}
		var started runs.View
		structured(t, res, &started)
		e.waitRun(t, e.ann, started.ID)
		if reqs := e.up.Requests(); len(reqs) != 1 || reqs[0].Body != `{"text":"later"}` {
			t.Errorf("upstream got %+v", reqs)
		}
	})
}
