package mcpadapter

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// TestEveryCallLeavesOneAuditRow: whichever MCP way a hub tool is called (the tenant
// URL, an agent URL under a confirm policy, a task, switchboard_run_async), a call
// that succeeds, has a bad argument, fails upstream or is canceled by its caller
// leaves exactly one tool_call row with that outcome (and, where it was asked, the
// rows of its confirmation).
func TestEveryCallLeavesOneAuditRow(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ag := &oneAgent{}
		var agentP switchboard.Principal
		e := newRunsEnvWith(t, db, ag, func(e *runsEnv) keys {
			var tools []agents.Tool
			for _, name := range []string{"notes_get_note", "notes_delete_note", "notes_wait"} {
				tools = append(tools, agents.Tool{AgentID: "agt_careful", Tool: name, TenantID: e.ann.TenantID, ConnectionID: e.connA})
			}
			ag.agent = &agents.Agent{ID: "agt_careful", TenantID: e.ann.TenantID, Name: "careful", CreatedBy: e.ann.UserID, Version: 1, Tools: tools}
			agentP = switchboard.Principal{TenantID: e.ann.TenantID, TenantSlug: e.ann.TenantSlug, Kind: switchboard.PrincipalAgent, UserID: e.ann.UserID, AgentID: "agt_careful"}
			return keys{"key-careful": agentP}
		})
		e.policy.set(agentP, router.ConfirmDestructive)
		ann := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		agent := e.connectTo(t, "/mcp/"+e.ann.TenantSlug+"/agents/agt_careful", "key-careful", mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		formAgent := e.connectTo(t, "/mcp/"+e.ann.TenantSlug+"/agents/agt_careful", "key-careful", mcp.LATEST_LEGACY_PROTOCOL_VERSION,
			&elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}})
		note := e.up.Put("kept")

		// On 2026-07-28 a request's stream ending is its cancellation; on the session
		// versions it is not (TestDroppedPostStreamDoesNotCancelTheCall), and
		// notifications/cancelled is (TestNoAnswerAfterCancelled).
		annModern := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		agentModern := e.connectTo(t, "/mcp/"+e.ann.TenantSlug+"/agents/agt_careful", "key-careful", mcp.LATEST_PROTOCOL_VERSION, nil)
		// canceled calls notes_wait and cancels it once the upstream holds it.
		canceled := func(c *client.Client) func() {
			return func() {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					req := mcp.CallToolRequest{}
					req.Params.Name, req.Params.Arguments = "notes_wait", map[string]any{}
					_, _ = c.CallTool(ctx, req)
				}()
				testwait.Recv(t, e.up.Waiting(), "the call to reach the upstream")
				cancel()
				testwait.Recv(t, done, "the canceled call to return")
			}
		}
		// viaTask runs a task and waits for its result.
		taskID := int64(930)
		viaTask := func(tool string, args map[string]any) func() {
			return func() {
				taskID++
				id := startTask(t, ann, taskID, tool, args)
				_, _ = ann.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
			}
		}
		// viaRun starts a run and waits for it to end.
		viaRun := func(tool string, args map[string]any) func() {
			return func() {
				res := call(t, ann, toolRunAsync, map[string]any{"tool": tool, "arguments": args})
				var v runs.View
				structured(t, res, &v)
				if v.ID != "" {
					e.waitRun(t, e.ann, v.ID)
				}
			}
		}
		tests := []struct {
			name string
			do   func()
			want []string
		}{
			{name: "tenant URL ok", do: func() { call(t, ann, "notes_get_note", map[string]any{"id": note}) }, want: []string{"tool_call ok notes_get_note"}},
			{name: "tenant URL invalid", do: func() { call(t, ann, "notes_get_note", map[string]any{"id": 7}) }, want: []string{"tool_call invalid notes_get_note"}},
			{name: "tenant URL upstream error", do: func() { call(t, ann, "notes_get_note", map[string]any{"id": "n404"}) }, want: []string{"tool_call not_found notes_get_note"}},
			{name: "tenant URL canceled", do: canceled(annModern), want: []string{"tool_call canceled notes_wait"}},
			{name: "agent URL ok", do: func() { call(t, agent, "notes_get_note", map[string]any{"id": note}) }, want: []string{"tool_call ok notes_get_note"}},
			{name: "agent URL invalid, under the confirm policy", do: func() { call(t, agent, "notes_delete_note", map[string]any{"id": 7}) }, want: []string{"tool_call invalid notes_delete_note"}},
			{name: "agent URL upstream error, once confirmed", do: func() {
				res := call(t, agent, "notes_delete_note", map[string]any{"id": "n404"})
				runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
				call(t, agent, toolSubmitElicitation, map[string]any{"run_id": runID, "response": map[string]any{"action": "accept"}})
				e.waitRun(t, agentP, runID)
			}, want: []string{"confirmation_asked ok notes_delete_note", "confirmation_accepted ok notes_delete_note", "tool_call ok switchboard_submit_elicitation", "tool_call not_found notes_delete_note"}},
			{name: "agent URL upstream error, confirmed in the client's form", do: func() {
				call(t, formAgent, "notes_delete_note", map[string]any{"id": "n404"})
			}, want: []string{"confirmation_asked ok notes_delete_note", "confirmation_accepted ok notes_delete_note", "tool_call not_found notes_delete_note"}},
			{name: "agent URL canceled", do: canceled(agentModern), want: []string{"tool_call canceled notes_wait"}},
			{name: "task ok", do: viaTask("notes_get_note", map[string]any{"id": note}), want: []string{"tool_call ok notes_get_note"}},
			{name: "task invalid", do: viaTask("notes_get_note", map[string]any{"id": 7}), want: []string{"tool_call invalid notes_get_note"}},
			{name: "task upstream error", do: viaTask("notes_get_note", map[string]any{"id": "n404"}), want: []string{"tool_call not_found notes_get_note"}},
			{name: "task canceled", do: func() {
				taskID++
				id := startTask(t, ann, taskID, "notes_wait", map[string]any{})
				testwait.Recv(t, e.up.Waiting(), "the call to reach the upstream")
				if _, err := ann.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: id}}); err != nil {
					t.Errorf("tasks/cancel: %v", err)
				}
			}, want: []string{"tool_call canceled notes_wait"}},
			// The hub's own tools are audited like any other (a run may end before the
			// call that started it is recorded: rows are compared in any order).
			{name: "run ok", do: viaRun("notes_get_note", map[string]any{"id": note}), want: []string{"tool_call ok switchboard_run_async", "tool_call ok notes_get_note"}},
			{name: "run invalid", do: viaRun("notes_get_note", map[string]any{"id": 7}), want: []string{"tool_call invalid notes_get_note", "tool_call invalid switchboard_run_async"}},
			{name: "run upstream error", do: viaRun("notes_get_note", map[string]any{"id": "n404"}), want: []string{"tool_call ok switchboard_run_async", "tool_call not_found notes_get_note"}},
			{name: "run canceled", do: func() {
				var v runs.View
				structured(t, call(t, ann, toolRunAsync, map[string]any{"tool": "notes_wait"}), &v)
				testwait.Recv(t, e.up.Waiting(), "the call to reach the upstream")
				call(t, ann, toolCancelRun, map[string]any{"run_id": v.ID})
			}, want: []string{"tool_call ok switchboard_run_async", "tool_call ok switchboard_cancel_run", "tool_call canceled notes_wait"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				from := e.audit.count()
				tt.do()
				got := e.audit.rowsFrom(t, from, len(tt.want))
				if diff := cmp.Diff(tt.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
					t.Errorf("audit rows (-want +got):\n%s", diff)
				}
			})
		}
	})
}
