package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

func TestRunAsyncFromStartToOutput(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		names := toolNames(t, c)
		for _, want := range []string{toolRunAsync, toolGetRun, toolCancelRun, toolListRuns, toolSubmitElicitation, "notes_create_note"} {
			if !strings.Contains(strings.Join(names, " "), want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}

		res := call(t, c, toolRunAsync, map[string]any{"tool": "notes_create_note", "arguments": map[string]any{"text": "from the background"}})
		if res.IsError {
			t.Fatalf("run_async: %s", text(res))
		}
		var started runs.View
		structured(t, res, &started)
		if started.State != runs.StateWorking || !strings.HasPrefix(started.ID, "run_") || started.Tool != "notes_create_note" {
			t.Fatalf("run_async answered %+v", started)
		}
		e.waitRun(t, e.ann, started.ID)

		var got runs.View
		structured(t, call(t, c, toolGetRun, map[string]any{"run_id": started.ID}), &got)
		var note notesfake.Note
		if err := json.Unmarshal(got.Output, &note); err != nil || got.State != runs.StateCompleted || note.Text != "from the background" {
			t.Fatalf("get_run = %+v (output %s)", got, got.Output)
		}
		if got.StartedAt == nil || got.FinishedAt == nil {
			t.Errorf("get_run lacks timestamps: %+v", got)
		}
		reqs := e.up.Requests()
		if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/notes" || reqs[0].Body != `{"text":"from the background"}` || reqs[0].Auth != "Bearer "+notesfake.Token {
			t.Errorf("upstream got %+v", reqs)
		}

		var list struct {
			Runs []runs.View `json:"runs"`
		}
		structured(t, call(t, c, toolListRuns, map[string]any{}), &list)
		if len(list.Runs) != 1 || list.Runs[0].ID != started.ID || list.Runs[0].Output != nil {
			t.Errorf("list_runs = %+v", list)
		}

		read, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "switchboard://runs/" + started.ID}})
		if err != nil {
			t.Fatal(err)
		}
		var fromResource runs.View
		if len(read.Contents) != 1 {
			t.Fatalf("resource contents: %+v", read.Contents)
		}
		tc, _ := read.Contents[0].(mcp.TextResourceContents)
		if err := json.Unmarshal([]byte(tc.Text), &fromResource); err != nil || fromResource.ID != started.ID || fromResource.State != runs.StateCompleted || string(fromResource.Output) != string(got.Output) {
			t.Errorf("resource = %s (%v)", tc.Text, err)
		}
		templates, err := c.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tpl := range templates.ResourceTemplates {
			found = found || tpl.URITemplate.Raw() == runsTemplate
		}
		if !found {
			t.Errorf("resources/templates/list lacks %s", runsTemplate)
		}

		// A failed run says what a failed call says.
		limited := call(t, c, toolRunAsync, map[string]any{"tool": "notes_limited"})
		var lv runs.View
		structured(t, limited, &lv)
		failed := e.waitRun(t, e.ann, lv.ID)
		if failed.State != runs.StateFailed || failed.Error == nil || failed.Error.Code != "rate_limited" || !strings.Contains(failed.Error.Message, "retry after 7 s") {
			t.Errorf("rate-limited run = %s %+v", failed.State, failed.Error)
		}

		cancelDone := call(t, c, toolCancelRun, map[string]any{"run_id": started.ID})
		if !cancelDone.IsError || !strings.Contains(text(cancelDone), "already ended") {
			t.Errorf("cancel of a completed run: %s", text(cancelDone))
		}
	})
}

func TestRunToolsRefuseBadInput(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		tests := []struct {
			name     string
			tool     string
			args     map[string]any
			contains string
		}{
			{name: "no tool", tool: toolRunAsync, args: map[string]any{"arguments": map[string]any{}}, contains: `"tool"`},
			{name: "unknown tool", tool: toolRunAsync, args: map[string]any{"tool": "notes_burn"}, contains: "not found"},
			{name: "itself", tool: toolRunAsync, args: map[string]any{"tool": toolRunAsync, "arguments": map[string]any{"tool": "notes_get_note"}}, contains: "switchboard_run_async itself"},
			{name: "bad argument of the tool", tool: toolRunAsync, args: map[string]any{"tool": "notes_create_note", "arguments": map[string]any{"text": 5}}, contains: `"text"`},
			{name: "unknown argument", tool: toolRunAsync, args: map[string]any{"tool": "notes_create_note", "later": true}, contains: `"later"`},
			{name: "get without id", tool: toolGetRun, args: map[string]any{}, contains: `"run_id"`},
			{name: "list with a bad limit", tool: toolListRuns, args: map[string]any{"limit": 500}, contains: `"limit"`},
			{name: "submit without response", tool: toolSubmitElicitation, args: map[string]any{"run_id": "run_x"}, contains: `"response"`},
			{name: "submit with a bad action", tool: toolSubmitElicitation, args: map[string]any{"run_id": "run_x", "response": map[string]any{"action": "maybe"}}, contains: `"response.action"`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := call(t, c, tt.tool, tt.args)
				if !res.IsError || !strings.Contains(text(res), tt.contains) {
					t.Errorf("%s: isError %v, %q; want an error containing %s", tt.tool, res.IsError, text(res), tt.contains)
				}
			})
		}
		if n := len(e.up.Requests()); n != 0 {
			t.Errorf("%d upstream requests after refused calls", n)
		}
	})
}

func TestRunsAreTheCallersOwn(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmAlways)
		ann := e.connect(t, e.ann, keyAnn, mcp.LATEST_PROTOCOL_VERSION, nil)
		id := e.up.Put("ann's note")
		// Without elicitation the call waits as an input_required run.
		res := call(t, ann, "notes_delete_note", map[string]any{"id": id})
		runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
		if !res.IsError || runID == "" {
			t.Fatalf("delete without elicitation: %+v %s", res.Meta, text(res))
		}
		for _, other := range []struct {
			name string
			p    any
			key  string
		}{{name: "another tenant", key: keyBea}, {name: "another user", key: keyBob}} {
			t.Run(other.name, func(t *testing.T) {
				p := e.bea
				if other.key == keyBob {
					p = e.bob
				}
				c := e.connect(t, p, other.key, mcp.LATEST_PROTOCOL_VERSION, nil)
				for _, tc := range []struct {
					tool string
					args map[string]any
				}{
					{tool: toolGetRun, args: map[string]any{"run_id": runID}},
					{tool: toolCancelRun, args: map[string]any{"run_id": runID}},
					{tool: toolSubmitElicitation, args: map[string]any{"run_id": runID, "response": map[string]any{"action": "accept"}}},
				} {
					res := call(t, c, tc.tool, tc.args)
					if !res.IsError || text(res) != "run not found" {
						t.Errorf("%s on another's run: %q, want run not found", tc.tool, text(res))
					}
				}
				var list struct {
					Runs []runs.View `json:"runs"`
				}
				structured(t, call(t, c, toolListRuns, map[string]any{}), &list)
				if len(list.Runs) != 0 {
					t.Errorf("list_runs shows another's runs: %+v", list.Runs)
				}
				_, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "switchboard://runs/" + runID}})
				_, errMissing := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "switchboard://runs/run_missing"}})
				if err == nil || errMissing == nil || strings.ReplaceAll(err.Error(), runID, "ID") != strings.ReplaceAll(errMissing.Error(), "run_missing", "ID") {
					t.Errorf("reading another's run: %v; a missing one: %v; want the same refusal", err, errMissing)
				}
			})
		}
		if !e.up.Has(id) {
			t.Error("the note was deleted by another principal's answer")
		}
		v, err := e.exec.Get(context.Background(), e.ann, runID)
		if err != nil || v.State != runs.StateInputRequired {
			t.Errorf("ann's run is %+v %v, want still input_required", v, err)
		}
	})
}

func TestElicitationBeforeDestructiveCalls(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		tests := []struct {
			name     string
			version  string
			action   mcp.ElicitationResponseAction
			content  any
			wantRun  bool
			contains string
		}{
			{name: "accept, stateless protocol", version: mcp.LATEST_PROTOCOL_VERSION, action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}, wantRun: true},
			{name: "accept, session protocol", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION, action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}, wantRun: true},
			{name: "decline, stateless protocol", version: mcp.LATEST_PROTOCOL_VERSION, action: mcp.ElicitationResponseActionDecline, contains: "declined"},
			{name: "decline, session protocol", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION, action: mcp.ElicitationResponseActionDecline, contains: "declined"},
			{name: "cancel", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION, action: mcp.ElicitationResponseActionCancel, contains: "dismissed"},
			{name: "accept with the box unticked", version: mcp.LATEST_LEGACY_PROTOCOL_VERSION, action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": false}, contains: "declined"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				el := &elicitor{action: tt.action, content: tt.content}
				c := e.connect(t, e.ann, keyAnn, tt.version, el)
				id := e.up.Put("precious")
				res := call(t, c, "notes_delete_note", map[string]any{"id": id})
				asked := el.asked()
				if len(asked) != 1 || !strings.Contains(asked[0], "Delete note (notes_delete_note)") || !strings.Contains(asked[0], `{"id":"`+id+`"}`) || !strings.Contains(asked[0], "cannot be restored") {
					t.Fatalf("the person was asked %q", asked)
				}
				if tt.wantRun {
					var out notesfake.Deleted
					structured(t, res, &out)
					if res.IsError || !out.Deleted || e.up.Has(id) {
						t.Errorf("accepted delete: isError %v %q, note still there %v", res.IsError, text(res), e.up.Has(id))
					}
					return
				}
				if !res.IsError || !strings.Contains(text(res), tt.contains) || !e.up.Has(id) {
					t.Errorf("refused delete: isError %v %q, note kept %v", res.IsError, text(res), e.up.Has(id))
				}
			})
		}
		// A read-only call under the destructive policy asks nobody.
		el := &elicitor{action: mcp.ElicitationResponseActionDecline}
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
		id := e.up.Put("readable")
		if res := call(t, c, "notes_get_note", map[string]any{"id": id}); res.IsError || len(el.asked()) != 0 {
			t.Errorf("get_note: %q, asked %q; want it run without asking", text(res), el.asked())
		}
		// Under "always" it asks.
		e.policy.set(e.ann, router.ConfirmAlways)
		if res := call(t, c, "notes_get_note", map[string]any{"id": id}); !res.IsError || len(el.asked()) != 1 {
			t.Errorf("get_note under always: %q, asked %q; want asked and declined", text(res), el.asked())
		}
		// Another tenant's policy is its own.
		bea := e.connect(t, e.bea, keyBea, mcp.LATEST_LEGACY_PROTOCOL_VERSION, el)
		idB := e.up.Put("beta's")
		if res := call(t, bea, "notes_delete_note", map[string]any{"id": idB}); res.IsError || e.up.Has(idB) || len(el.asked()) != 1 {
			t.Errorf("beta's delete under policy never: %q", text(res))
		}
	})
}

func TestConfirmationWithoutElicitation(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		wantSummary := fmt.Sprintf("Confirm: Delete note (notes_delete_note) will run as Notes account %q. It may delete or overwrite what cannot be restored.", "notes-"+e.ann.TenantSlug)
		tests := []struct {
			name      string
			action    string
			wantState runs.State
			wantNote  bool
		}{
			{name: "accept", action: "accept", wantState: runs.StateCompleted, wantNote: false},
			{name: "decline", action: "decline", wantState: runs.StateCanceled, wantNote: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := e.up.Put("maybe")
				res := call(t, c, "notes_delete_note", map[string]any{"id": id})
				runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
				if !res.IsError || runID == "" || res.Meta.AdditionalFields["switchboard/state"] != "input_required" || !strings.Contains(text(res), "switchboard_submit_elicitation") {
					t.Fatalf("delete without elicitation: %+v %q", res.Meta, text(res))
				}
				if !e.up.Has(id) {
					t.Fatal("the note was deleted before anyone confirmed")
				}
				var pending runs.View
				structured(t, call(t, c, toolGetRun, map[string]any{"run_id": runID}), &pending)
				// The stored summary is exactly the tool and account, without the arguments. (A
				// search for the note's id, "n1", in it also matched the account label's random
				// suffix now and then.)
				if pending.State != runs.StateInputRequired || pending.Elicitation == nil {
					t.Fatalf("pending run = %+v; want input_required with a confirmation", pending)
				}
				if diff := cmp.Diff(wantSummary, pending.Elicitation.Message); diff != "" {
					t.Errorf("the pending run's summary (-want +got), which must not hold the arguments:\n%s", diff)
				}
				sub := call(t, c, toolSubmitElicitation, map[string]any{"run_id": runID, "response": map[string]any{"action": tt.action}})
				if sub.IsError {
					t.Fatalf("submit: %s", text(sub))
				}
				got := e.waitRun(t, e.ann, runID)
				if got.State != tt.wantState || e.up.Has(id) != tt.wantNote {
					t.Errorf("after %s: %s, note kept %v", tt.action, got.State, e.up.Has(id))
				}
				again := call(t, c, toolSubmitElicitation, map[string]any{"run_id": runID, "response": map[string]any{"action": "accept"}})
				if !again.IsError || !strings.Contains(text(again), "not waiting") {
					t.Errorf("second submit: %q", text(again))
				}
			})
		}
		// run_async of a destructive tool waits the same way.
		id := e.up.Put("async")
		res := call(t, c, toolRunAsync, map[string]any{"tool": "notes_delete_note", "arguments": map[string]any{"id": id}})
		runID, _ := res.Meta.AdditionalFields["switchboard/run_id"].(string)
		if runID == "" || !e.up.Has(id) {
			t.Fatalf("run_async of a destructive tool: %q", text(res))
		}
		if v, _ := e.exec.Get(context.Background(), e.ann, runID); v.State != runs.StateInputRequired || v.Tool != "notes_delete_note" {
			t.Errorf("run_async run = %+v", v)
		}
	})
}

func TestTaskAugmentedCall(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		// The Go client's CallTool does not read a CreateTaskResult, so the call is sent raw.
		resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(900)), Method: string(mcp.MethodToolsCall),
			Params: map[string]any{"name": "notes_create_note", "arguments": map[string]any{"text": "as a task"}, "task": map[string]any{}},
		})
		if err != nil || resp.Error != nil {
			t.Fatalf("task-augmented call: %v %+v", err, resp)
		}
		var created mcp.CreateTaskResult
		if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" || created.Task.Status != mcp.TaskStatusWorking {
			t.Fatalf("task-augmented call answered %s (%v)", resp.Result, err)
		}
		tasks, err := c.ListTasks(context.Background(), mcp.ListTasksRequest{})
		if err != nil || len(tasks.Tasks) != 1 || tasks.Tasks[0].TaskId != created.Task.TaskId {
			t.Fatalf("tasks/list = %+v, %v", tasks, err)
		}
		res, err := c.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: created.Task.TaskId}})
		if err != nil {
			t.Fatal(err)
		}
		var note notesfake.Note
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &note); err != nil || res.IsError || note.Text != "as a task" {
			t.Fatalf("task result = %+v (%s)", res, raw)
		}
		var list struct {
			Runs []runs.View `json:"runs"`
		}
		structured(t, call(t, c, toolListRuns, map[string]any{}), &list)
		if len(list.Runs) != 1 || list.Runs[0].State != runs.StateCompleted || list.Runs[0].Tool != "notes_create_note" {
			t.Errorf("the task's run: %+v", list.Runs)
		}
		if diff := cmp.Diff(1, len(e.up.Requests())); diff != "" {
			t.Errorf("upstream requests (-want +got):\n%s", diff)
		}
	})
}

func TestCancelingATaskCancelsItsRun(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		c := e.connect(t, e.ann, keyAnn, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(901)), Method: string(mcp.MethodToolsCall),
			Params: map[string]any{"name": "notes_wait", "arguments": map[string]any{}, "task": map[string]any{}},
		})
		if err != nil || resp.Error != nil {
			t.Fatalf("task-augmented call: %v %+v", err, resp)
		}
		var created mcp.CreateTaskResult
		if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
			t.Fatalf("task-augmented call answered %s (%v)", resp.Result, err)
		}
		select {
		case <-e.up.Waiting():
		case <-time.After(30 * time.Second):
			t.Fatal("the task's run never reached the upstream")
		}
		// Another principal cannot cancel it: the task is not theirs.
		bob := e.connect(t, e.bob, keyBob, mcp.LATEST_LEGACY_PROTOCOL_VERSION, nil)
		if _, err := bob.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: created.Task.TaskId}}); err == nil {
			t.Error("bob canceled ann's task")
		}
		if _, err := c.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: created.Task.TaskId}}); err != nil {
			t.Fatalf("tasks/cancel: %v", err)
		}
		var list struct {
			Runs []runs.View `json:"runs"`
		}
		structured(t, call(t, c, toolListRuns, map[string]any{}), &list)
		if len(list.Runs) != 1 {
			t.Fatalf("runs = %+v", list.Runs)
		}
		if got := e.waitRun(t, e.ann, list.Runs[0].ID); got.State != runs.StateCanceled {
			t.Errorf("the canceled task's run is %s, want canceled", got.State)
		}
	})
}
