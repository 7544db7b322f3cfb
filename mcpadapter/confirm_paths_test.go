package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// startTask sends a task-augmented tools/call (the Go client's CallTool does not read
// a CreateTaskResult) and returns the task's id.
func startTask(t *testing.T, c *client.Client, id int64, tool string, args map[string]any) string {
	t.Helper()
	resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: string(mcp.MethodToolsCall),
		Params: map[string]any{"name": tool, "arguments": args, "task": map[string]any{}},
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("task-augmented call: %v %+v", err, resp)
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("task-augmented call answered %s (%v)", resp.Result, err)
	}
	return created.Task.TaskId
}

// TestTaskOutlivesItsRequest: the confirm policy of a task-augmented call is read
// after mcp-go has answered with the task and ended the request's context (as a
// database read does when it is slow); the task still runs and reaches the upstream.
func TestTaskOutlivesItsRequest(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		answered := make(chan struct{})
		e.policy.once = func(ctx context.Context) error {
			<-answered
			if ctx.Done() != nil {
				<-ctx.Done() // a context tied to the request ends with it
			}
			return ctx.Err()
		}
		taskID := startTask(t, c, 910, "notes_create_note", map[string]any{"text": "after the answer"})
		close(answered)
		res, err := c.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: taskID}})
		if err != nil {
			t.Fatal(err)
		}
		var note notesfake.Note
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &note); err != nil || res.IsError || note.Text != "after the answer" {
			t.Fatalf("task result = %+v (%s)", res, raw)
		}
		reqs := e.up.Requests()
		if len(reqs) != 1 || reqs[0].Method != "POST" || !strings.Contains(reqs[0].Body, "after the answer") {
			t.Errorf("upstream requests = %+v, want the one POST of the task", reqs)
		}
	})
}

// TestConfirmPolicyOnEveryMCPPath: under a destructive policy, a destructive tool waits
// for its confirmation whichever MCP way it is called (directly, by run_async, as a
// task), nothing reaches the upstream before it, and the accepted call runs once.
func TestConfirmPolicyOnEveryMCPPath(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		tests := []struct {
			name  string
			start func(noteID string) (runID string, taskID string)
		}{
			{name: "tools/call", start: func(id string) (string, string) {
				res := call(t, c, "notes_delete_note", map[string]any{"id": id})
				runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
				if !res.IsError || !strings.Contains(text(res), "https://hub.test/approvals/"+runID) {
					t.Errorf("the tool error does not link the approval page: %q", text(res))
				}
				return runID, ""
			}},
			{name: "switchboard_run_async", start: func(id string) (string, string) {
				res := call(t, c, toolRunAsync, map[string]any{"tool": "notes_delete_note", "arguments": map[string]any{"id": id}})
				runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
				return runID, ""
			}},
			{name: "task", start: func(id string) (string, string) {
				taskID := startTask(t, c, 920, "notes_delete_note", map[string]any{"id": id})
				var runID string
				testwait.Until(t, "the task's run to wait for its confirmation", func() bool {
					var list struct {
						Runs []runs.View `json:"runs"`
					}
					structured(t, call(t, c, toolListRuns, map[string]any{"state": "input_required"}), &list)
					if len(list.Runs) == 1 {
						runID = list.Runs[0].ID
					}
					return runID != ""
				})
				return runID, taskID
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := e.up.Put("precious " + tt.name)
				runID, taskID := tt.start(id)
				if runID == "" {
					t.Fatal("no run waits for the confirmation")
				}
				if v, err := e.exec.Get(context.Background(), e.ann, runID); err != nil || v.State != runs.StateInputRequired {
					t.Fatalf("run = %+v, %v; want input_required", v, err)
				}
				if !e.up.Has(id) {
					t.Fatal("the note was deleted before anyone confirmed")
				}
				if sub := call(t, c, toolSubmitElicitation, map[string]any{"run_id": runID, "response": map[string]any{"action": "accept"}}); sub.IsError {
					t.Fatalf("submit: %s", text(sub))
				}
				if got := e.waitRun(t, e.ann, runID); got.State != runs.StateCompleted || e.up.Has(id) {
					t.Errorf("after accept: %+v, note kept %v", got, e.up.Has(id))
				}
				if taskID != "" {
					res, err := c.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: taskID}})
					if err != nil || res.IsError {
						t.Errorf("task result: %v %+v", err, res)
					}
				}
			})
		}
		if deletes := e.deletes(); deletes != len(tests) {
			t.Errorf("%d DELETEs reached the upstream, want one per accepted call (%d)", deletes, len(tests))
		}
	})
}

// TestApprovalByAPersonOnly: under approval "person" a client that can show a form is
// not asked (its answer would be the agent's word); the call waits for the approval
// page, which the tool error names, and the relay tool refuses, naming it too.
func TestApprovalByAPersonOnly(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		e.policy.setApproval(e.ann, router.ApprovalPerson)
		el := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}}
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
		id := e.up.Put("a person decides")
		res := call(t, c, "notes_delete_note", map[string]any{"id": id})
		runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
		page := "https://hub.test/approvals/" + runID
		if len(el.asked()) != 0 {
			t.Errorf("the client's form was asked %q", el.asked())
		}
		if !res.IsError || runID == "" || !strings.Contains(text(res), "Only a signed-in person may approve it: ask them to approve or decline it at "+page) {
			t.Fatalf("result: %q", text(res))
		}
		sub := call(t, c, toolSubmitElicitation, map[string]any{"run_id": runID, "response": map[string]any{"action": "accept"}})
		if !sub.IsError || !strings.Contains(text(sub), "approval: person") || !strings.Contains(text(sub), page) {
			t.Errorf("the relay: %q, want a refusal naming %s", text(sub), page)
		}
		if v, _ := e.exec.Get(context.Background(), e.ann, runID); v.State != runs.StateInputRequired || !e.up.Has(id) {
			t.Errorf("run = %+v, note kept %v; want it still waiting", v, e.up.Has(id))
		}
	})
}

// TestConfirmPolicyThroughCallTool: in tool search mode, call_tool runs a tool through
// the same confirmation as a direct call: a destructive tool under the policy waits.
func TestConfirmPolicyThroughCallTool(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ag := &oneAgent{}
		var agentP switchboard.Principal
		e := newRunsEnvWith(t, db, ag, func(e *runsEnv) keys {
			ag.agent = &agents.Agent{ID: "agt_search", TenantID: e.ann.TenantID, Name: "searcher", CreatedBy: e.ann.UserID, Version: 1, ToolMode: agents.ToolModeSearch,
				Tools: []agents.Tool{{AgentID: "agt_search", Tool: "notes_delete_note", TenantID: e.ann.TenantID, ConnectionID: e.connA}}}
			agentP = switchboard.Principal{TenantID: e.ann.TenantID, TenantSlug: e.ann.TenantSlug, Kind: switchboard.PrincipalAgent, UserID: e.ann.UserID, AgentID: "agt_search"}
			return keys{"key-search": agentP}
		})
		e.policy.set(agentP, router.ConfirmDestructive)
		c := e.connectTo(t, "/mcp/"+e.ann.TenantSlug+"/agents/agt_search", "key-search", mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		id := e.up.Put("found by search")
		// The search tools are tools like any other: run through the router, audited.
		from := e.audit.count()
		if found := call(t, c, searchToolName, map[string]any{"query": "delete note"}); found.IsError || !strings.Contains(text(found), `"notes_delete_note"`) {
			t.Errorf("search_tools: %q", text(found))
		}
		if got := e.audit.rowsFrom(t, from, 1); len(got) != 1 || got[0] != "tool_call ok search_tools" {
			t.Errorf("audit rows of search_tools: %q", got)
		}
		res := call(t, c, callToolName, map[string]any{"name": "notes_delete_note", "arguments": map[string]any{"id": id}})
		runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
		if !res.IsError || runID == "" || !e.up.Has(id) {
			t.Fatalf("call_tool of a destructive tool under the policy: %q, note kept %v", text(res), e.up.Has(id))
		}
		if v, _ := e.exec.Get(context.Background(), agentP, runID); v.State != runs.StateInputRequired {
			t.Errorf("run = %+v, want input_required", v)
		}
	})
}

// TestConfirmationFormErrorIsTheCallsAnswer: a client that answers the confirmation
// form with an error (it could not show it) gets the call's result saying so, nothing
// run, rather than a JSON-RPC internal error about round trips; an audit row records
// the answer.
func TestConfirmationFormErrorIsTheCallsAnswer(t *testing.T) {
	t.Parallel()
	e := newRunsEnv(t, testdb.SQLite(t))
	e.policy.set(e.ann, router.ConfirmDestructive)
	el := &elicitor{fail: errors.New("no display to show the form on")}
	c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
	id := e.up.Put("kept")
	res := call(t, c, "notes_delete_note", map[string]any{"id": id})
	if !res.IsError || !strings.Contains(text(res), "could not ask the person to confirm notes_delete_note") || !strings.Contains(text(res), "no display to show the form on") {
		t.Errorf("the call = %q, want a tool error naming the client's error", text(res))
	}
	if strings.Contains(text(res), "multi round-trip") {
		t.Errorf("the call = %q, names the hub's internals", text(res))
	}
	if !e.up.Has(id) {
		t.Error("the note was deleted without a confirmation")
	}
	if got := el.asked(); len(got) != 1 {
		t.Errorf("the client was asked %q, want the form once", got)
	}
}
