package mcpadapter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/runs"
)

// approveWorkflow asks its person for a decision and comments, then writes a note of
// the comments on alpha's notes connection; slowApproveWorkflow shows its question for
// 100 ms only.
const (
	approveWorkflow = "name: approve\nparameters: {type: object, properties: {text: {type: string}}, required: [text]}\n" +
		"steps:\n  - name: ask\n    input:\n      message: \"Write ${{ params.text }}?\"\n" +
		"      schema: {type: object, properties: {approval_status: {type: string, enum: [approved, rejected]}, comments: {type: string}}, required: [approval_status, comments]}\n" +
		"  - {name: write, tool: notes_create_note, connection: CONN, needs: [ask], args: {text: \"${{ steps.ask.output.comments }}\"}}\n" +
		"outputs: {id: \"${{ steps.write.output.id }}\", approval_status: \"${{ steps.ask.output.approval_status }}\"}\n"
	slowApproveWorkflow = "name: slow_approve\n" +
		"steps:\n  - name: ask\n    timeout: 100ms\n    input:\n      message: \"Write it?\"\n" +
		"      schema: {type: object, properties: {comments: {type: string}}, required: [comments]}\n" +
		"  - {name: write, tool: notes_create_note, connection: CONN, needs: [ask], args: {text: \"${{ steps.ask.output.comments }}\"}}\n" +
		"outputs: {id: \"${{ steps.write.output.id }}\"}\n"
)

// flowAnswer is a flow tool's structured result.
type flowAnswer struct {
	Output map[string]any `json:"output"`
	Status struct {
		InstanceID string `json:"instance_id"`
		State      string `json:"state"`
	} `json:"status"`
	Elicitations []struct {
		ID       string `json:"elicitation_id"`
		Message  string `json:"message"`
		TimedOut bool   `json:"timed_out"`
	} `json:"elicitations"`
}

// silentPerson is a client's elicitation handler whose person never answers: each
// request waits until the test ends.
type silentPerson struct {
	mu    sync.Mutex
	asked []string
	done  chan struct{}
}

func (s *silentPerson) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s.mu.Lock()
	s.asked = append(s.asked, req.Params.Message)
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
	}
	return nil, context.Canceled
}

// connectSilent opens a session whose client declares elicitation and never answers.
func (e *runsEnv) connectSilent(t *testing.T, key, version string) (*client.Client, *silentPerson) {
	t.Helper()
	sp := &silentPerson{done: make(chan struct{})}
	tr, err := transport.NewStreamableHTTP(e.srv.URL+"/mcp/"+e.ann.TenantSlug, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithElicitationHandler(sp))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "silent-test", Version: "1"}
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { close(sp.done); _ = c.Close() })
	return c, sp
}

// TestFlowInputStepOverMCP: over each protocol version, run_flow__ of a workflow whose
// step asks its person shows the question in the client's form: accepted, the run
// goes on with the answer and the tool answers the output; declined, the run fails and
// the tool answers an error. A client without forms hears input_required with the
// elicitation, which submit_flow_elicitation answers.
func TestFlowInputStepOverMCP(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, approveWorkflow)
		for _, version := range []string{"2025-06-18", mcp.LATEST_PROTOCOL_VERSION} {
			yes := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"approval_status": "approved", "comments": "ok by me"}}
			c := e.connect(t, e.ann, keyAnn, version, yes)
			var ans flowAnswer
			res := call(t, c, "run_flow__approve", map[string]any{"text": "hello"})
			structured(t, res, &ans)
			if res.IsError || ans.Status.State != "completed" || ans.Output["approval_status"] != "approved" || ans.Output["id"] == nil {
				t.Fatalf("%s: accepted run_flow__approve = %s", version, text(res))
			}
			if asked := yes.asked(); len(asked) != 1 || asked[0] != "Write hello?" {
				t.Errorf("%s: the client was asked %q", version, asked)
			}

			no := &elicitor{action: mcp.ElicitationResponseActionDecline}
			c = e.connect(t, e.ann, keyAnn, version, no)
			res = call(t, c, "run_flow__approve", map[string]any{"text": "bye"})
			structured(t, res, &ans)
			if !res.IsError || ans.Status.State != "failed" || !strings.Contains(text(res), "declined") {
				t.Errorf("%s: declined run_flow__approve = %s", version, text(res))
			}

			c = e.connect(t, e.ann, keyAnn, version, nil)
			res = call(t, c, "run_flow__approve", map[string]any{"text": "later"})
			ans = flowAnswer{}
			structured(t, res, &ans)
			if res.IsError || ans.Status.State != "input_required" || len(ans.Elicitations) != 1 || ans.Elicitations[0].Message != "Write later?" ||
				!strings.Contains(text(res), ans.Elicitations[0].ID) {
				t.Fatalf("%s: run_flow__approve without forms = %s", version, text(res))
			}
			res = call(t, c, "submit_flow_elicitation", map[string]any{"instance_id": ans.Status.InstanceID, "elicitation_id": ans.Elicitations[0].ID,
				"response": map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "relayed"}}})
			if res.IsError {
				t.Fatalf("%s: submit = %s", version, text(res))
			}
			if v := e.waitRun(t, e.ann, ans.Status.InstanceID); v.State != runs.StateCompleted {
				t.Errorf("%s: the run after the answer = %+v", version, v)
			}
		}
	})
}

// TestFlowElicitationTimesOutThenIsSubmitted: a question nobody answers within its
// step's timeout leaves run_flow__ answering input_required with the elicitation
// timed out; submit_flow_elicitation answers it later and the run completes.
// replay_flow_pending_elicitation shows a pending question again to the calling
// session, whose answer resumes the run. Neither tool answers another person or
// another tenant about the instance.
func TestFlowElicitationTimesOutThenIsSubmitted(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newWorkflowsEnv(t, db)
		e.saveWorkflows(t, slowApproveWorkflow)
		c, silent := e.connectSilent(t, keyAnn, "2025-06-18")
		var ans flowAnswer
		res := call(t, c, "run_flow__slow_approve", map[string]any{})
		structured(t, res, &ans)
		if res.IsError || ans.Status.State != "input_required" || len(ans.Elicitations) != 1 || !ans.Elicitations[0].TimedOut {
			t.Fatalf("run_flow__slow_approve = %s", text(res))
		}
		silent.mu.Lock()
		asked := len(silent.asked)
		silent.mu.Unlock()
		if asked != 1 {
			t.Fatalf("the client was asked %d times", asked)
		}
		instance, eid := ans.Status.InstanceID, ans.Elicitations[0].ID

		// Others hear what they would of an instance that does not exist.
		for _, who := range []struct {
			p   switchboard.Principal
			key string
		}{{e.bob, keyBob}, {e.bea, keyBea}} {
			oc := e.connect(t, who.p, who.key, "2025-06-18", nil)
			missing := call(t, oc, "replay_flow_pending_elicitation", map[string]any{"instance_id": "run_nope"})
			got := call(t, oc, "replay_flow_pending_elicitation", map[string]any{"instance_id": instance})
			if !got.IsError || text(got) != text(missing) {
				t.Errorf("%s replays: %s; want %s", who.key, text(got), text(missing))
			}
			got = call(t, oc, "submit_flow_elicitation", map[string]any{"instance_id": instance, "elicitation_id": eid,
				"response": map[string]any{"action": "accept", "content": map[string]any{"comments": "not mine"}}})
			if !got.IsError || !strings.Contains(text(got), "not found") {
				t.Errorf("%s submits: %s; want not found", who.key, text(got))
			}
		}

		// Replayed to a session whose person answers, the question resumes the run.
		yes := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"comments": "replayed"}}
		rc := e.connect(t, e.ann, keyAnn, "2025-06-18", yes)
		res = call(t, rc, "replay_flow_pending_elicitation", map[string]any{"instance_id": instance})
		var replay struct {
			Answered []string `json:"answered"`
		}
		structured(t, res, &replay)
		if res.IsError || len(replay.Answered) != 1 || replay.Answered[0] != eid {
			t.Fatalf("replay = %s", text(res))
		}
		if v := e.waitRun(t, e.ann, instance); v.State != runs.StateCompleted {
			t.Fatalf("the replayed run = %+v", v)
		}

		// Another one times out and is answered later with submit_flow_elicitation.
		res = call(t, c, "run_flow__slow_approve", map[string]any{})
		ans = flowAnswer{}
		structured(t, res, &ans)
		if ans.Status.State != "input_required" || len(ans.Elicitations) != 1 {
			t.Fatalf("second run_flow__slow_approve = %s", text(res))
		}
		res = call(t, c, "submit_flow_elicitation", map[string]any{"instance_id": ans.Status.InstanceID, "elicitation_id": ans.Elicitations[0].ID,
			"response": map[string]any{"action": "accept", "content": map[string]any{"comments": "late"}}})
		if res.IsError {
			t.Fatalf("submit = %s", text(res))
		}
		testwait.Until(t, "the answered run completes", func() bool {
			var q flowAnswer
			structured(t, call(t, c, "query_flow__slow_approve", map[string]any{"instance_id": ans.Status.InstanceID}), &q)
			return q.Status.State == "completed" && q.Output["id"] != nil
		})
		rows := strings.Join(e.audit.rows(), "\n")
		for _, want := range []string{"confirmation_asked ok run_flow__slow_approve", "confirmation_timed_out ok run_flow__slow_approve", "confirmation_accepted ok run_flow__slow_approve"} {
			if !strings.Contains(rows, want) {
				t.Errorf("no audit row %q in\n%s", want, rows)
			}
		}
	})
}
