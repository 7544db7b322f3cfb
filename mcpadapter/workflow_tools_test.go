package mcpadapter

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/workflows"
)

// saveWorkflow saves a workflow definition as ann.
func (e *runsEnv) saveWorkflow(t *testing.T, src string) {
	t.Helper()
	def, err := workflows.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.workflows.Create(context.Background(), e.ann, def, src, false); err != nil {
		t.Fatalf("save workflow %s: %v", def.Name, err)
	}
}

// TestWorkflowConfirmedInTheClientsForm: a workflow tool whose run the caller's policy
// wants confirmed asks the person with elicitation/create, as any tool's call does,
// when the client declared elicitation: the form says what each step changes, the run
// goes on (and reaches the upstream) only on accept, and a decline runs nothing.
func TestWorkflowConfirmedInTheClientsForm(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		e.saveWorkflow(t, "name: purge\nparameters: {type: object, properties: {id: {type: string}}, required: [id]}\nsteps:\n  - {name: remove, tool: notes_delete_note, args: {id: \"${{ params.id }}\"}}\n")
		tests := []struct {
			name    string
			action  mcp.ElicitationResponseAction
			content any
			ran     bool
			audit   string
		}{
			{name: "accepted", action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}, ran: true, audit: "confirmation_accepted workflow_purge"},
			{name: "declined", action: mcp.ElicitationResponseActionDecline, audit: "confirmation_declined workflow_purge"},
		}
		for _, tt := range tests { // one after the other: they share the upstream
			t.Run(tt.name, func(t *testing.T) {
				el := &elicitor{action: tt.action, content: tt.content}
				c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
				id := e.up.Put("purge " + tt.name)
				deletes := e.deletes()
				res := call(t, c, "workflow_purge", map[string]any{"id": id})
				asked := el.asked()
				if len(asked) != 1 || !strings.Contains(asked[0], "It will change: remove: Delete note (notes_delete_note) on notes-alpha-") || !strings.Contains(asked[0], ", may delete or overwrite what cannot be restored") || !strings.Contains(asked[0], id) {
					t.Fatalf("the person was asked %q; want one form listing the step's change and the parameters", asked)
				}
				var out struct {
					Status string `json:"status"`
				}
				if tt.ran {
					structured(t, res, &out)
					if res.IsError || out.Status != "success" || e.up.Has(id) || e.deletes() != deletes+1 {
						t.Errorf("accepted: %s, note kept %v; want the run to delete it once", text(res), e.up.Has(id))
					}
				} else if !res.IsError || !strings.Contains(text(res), "declined") || !e.up.Has(id) || e.deletes() != deletes {
					t.Errorf("declined: %s (isError %v), note kept %v; want a refusal and nothing run", text(res), res.IsError, e.up.Has(id))
				}
				if got := e.audit.confirmations(); len(got) < 2 || got[len(got)-2] != "confirmation_asked workflow_purge" || got[len(got)-1] != tt.audit {
					t.Errorf("confirmation audit rows %q; want asked, then %s", got, tt.audit)
				}
			})
		}
	})
}

// TestWorkflowApprovalByAPersonOnly: under approval "person" a workflow tool does not
// take its confirmation in the client's form, even from a client that can show one:
// the run waits input_required and the answer sends the agent to the person with the
// approval page, not to the relay tool, which would refuse it.
func TestWorkflowApprovalByAPersonOnly(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		e.policy.setApproval(e.ann, router.ApprovalPerson)
		e.saveWorkflow(t, "name: purge\nparameters: {type: object, properties: {id: {type: string}}, required: [id]}\nsteps:\n  - {name: remove, tool: notes_delete_note, args: {id: \"${{ params.id }}\"}}\n")
		el := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}}
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
		id := e.up.Put("needs a person")
		var out struct {
			Status  string `json:"status"`
			RunID   string `json:"workflow_id"`
			Message string `json:"message"`
		}
		structured(t, call(t, c, "workflow_purge", map[string]any{"id": id}), &out)
		if asked := el.asked(); len(asked) != 0 {
			t.Errorf("the client's form was asked %q; want only the approval page", asked)
		}
		if out.Status != "input_required" || !strings.Contains(out.Message, "only a signed-in person may approve it: ask them to approve or decline it at https://hub.test/approvals/"+out.RunID) ||
			strings.Contains(out.Message, "switchboard_submit_elicitation") {
			t.Errorf("answer = %+v; want input_required sending the agent to the person's approval page", out)
		}
		if !e.up.Has(id) || e.deletes() != 0 {
			t.Error("the step ran before a person approved it")
		}
	})
}

// TestWorkflowReportsItsSteps: a workflow tool called with a progress token is sent
// notifications/progress as its steps end, before its result: progress the steps
// ended, total the workflow's steps.
func TestWorkflowReportsItsSteps(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflow(t, "name: slow\nsteps:\n  - {name: note, tool: notes_create_note, args: {text: first}}\n  - {name: hold, tool: notes_wait, needs: [note]}\n")
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		var mu sync.Mutex
		var got []string
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method != string(mcp.MethodNotificationProgress) || n.Params.AdditionalFields["progressToken"] != "wf-1" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%v/%v %v", n.Params.AdditionalFields["progress"], n.Params.AdditionalFields["total"], n.Params.AdditionalFields["message"]))
		})
		progress := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}
		type answer struct {
			res *mcp.CallToolResult
			err error
		}
		done := make(chan answer, 1)
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "workflow_slow"
			req.Params.Arguments = map[string]any{}
			req.Params.Meta = &mcp.Meta{ProgressToken: "wf-1"}
			res, err := c.CallTool(context.Background(), req)
			done <- answer{res, err}
		}()
		testwait.Recv(t, e.up.Waiting(), "the second step to reach the upstream")
		testwait.Until(t, "the first step's progress", func() bool { return len(progress()) == 1 })
		e.up.Release()
		a := testwait.Recv(t, done, "the workflow to answer")
		if a.err != nil || a.res.IsError {
			t.Fatalf("workflow_slow: %v %+v", a.err, a.res)
		}
		want := []string{"1/2 1 of 2 steps done", "2/2 2 of 2 steps done"}
		if got := progress(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("progress before the result %q, want %q", got, want)
		}
	})
}
