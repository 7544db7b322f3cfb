package workflows_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/workflows"
)

// formClient is the MCP client of a call, as providers.Caller: it shows each
// elicitation/create to its person, who answers with the next of answers; with none
// left, nobody answers and the request lasts until it is given up.
type formClient struct {
	mu      sync.Mutex
	asked   []map[string]any // the params of each request
	answers []map[string]any
}

func (c *formClient) Log(map[string]any) {}

func (c *formClient) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != "elicitation/create" {
		return nil, switchboard.Invalid("method", method)
	}
	var p map[string]any
	_ = json.Unmarshal(params, &p)
	c.mu.Lock()
	c.asked = append(c.asked, p)
	var ans map[string]any
	if len(c.answers) > 0 {
		ans, c.answers = c.answers[0], c.answers[1:]
	}
	c.mu.Unlock()
	if ans == nil {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return json.Marshal(ans)
}

func (c *formClient) requests() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.asked...)
}

// callAsync calls a tool in the background, answering its result on the channel.
func callAsync(t *testing.T, ctx context.Context, reg *providers.Registry, p switchboard.Principal, name string, args any) <-chan map[string]any {
	out := make(chan map[string]any, 1)
	go func() { out <- callTool(t, ctx, reg, p, name, args) }()
	return out
}

// TestRunFlowAsksInTheClientsForm: run_flow__ of a workflow with an asking step shows
// the question as a form to the caller's client (message, requested schema) and, once
// the person accepted, waits for the run again and answers the completed output typed
// by their answer.
func TestRunFlowAsksInTheClientsForm(t *testing.T) {
	t.Parallel()
	svc, p, answer, audit := workflows.InputRigForTest(t, "5m")
	reg := hubRegistry(t, svc)
	client := &formClient{answers: []map[string]any{{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "Approved"}}}}
	ctx := providers.WithCaller(switchboard.WithPrincipal(context.Background(), p), client)
	done := callAsync(t, ctx, reg, p, "run_flow__buy", map[string]any{"item": "laptop"})
	if args := answer(map[string]any{"removed": true}); args["id"] != "laptop" {
		t.Fatalf("drop got %v", args)
	}
	got := testwait.Recv(t, done, "run_flow__buy's answer")
	if at(got, "status", "state") != "completed" || at(got, "output", "approval_status") != "approved" || at(got, "output", "comments") != "Approved" {
		t.Fatalf("run_flow__buy = %v", got)
	}
	asked := client.requests()
	if len(asked) != 1 || asked[0]["message"] != "Approve laptop?" || at(asked[0], "requestedSchema", "properties", "approval_status", "type") != "string" {
		t.Fatalf("the client was asked %v", asked)
	}
	if a := strings.Join(audit(), ","); a != "confirmation_asked,confirmation_accepted" {
		t.Errorf("audit = %s", a)
	}
}

// TestTimedOutElicitationIsSubmittedLater: when nobody answers the form within the
// step's timeout, run_flow__ answers input_required with the elicitation (its id,
// timed out) and the run waits on; submit_flow_elicitation answers it later and the
// run completes, which query_flow__ shows. The time-out is audited.
func TestTimedOutElicitationIsSubmittedLater(t *testing.T) {
	t.Parallel()
	svc, p, answer, audit := workflows.InputRigForTest(t, "50ms")
	reg := hubRegistry(t, svc)
	client := &formClient{} // nobody answers
	ctx := providers.WithCaller(switchboard.WithPrincipal(context.Background(), p), client)
	got := callTool(t, ctx, reg, p, "run_flow__buy", map[string]any{"item": "laptop"})
	if at(got, "status", "state") != "input_required" {
		t.Fatalf("run_flow__buy = %v; want input_required", got)
	}
	es, _ := got["elicitations"].([]any)
	if len(es) != 1 || at(es[0], "timed_out") != true || at(es[0], "step") != "approval" {
		t.Fatalf("elicitations = %v; want the approval, timed out", got["elicitations"])
	}
	id, _ := at(es[0], "elicitation_id").(string)
	instance, _ := at(got, "status", "instance_id").(string)
	if len(client.requests()) != 1 {
		t.Fatalf("the client was asked %d times", len(client.requests()))
	}
	if a := strings.Join(audit(), ","); a != "confirmation_asked,confirmation_timed_out" {
		t.Errorf("audit = %s; want the question and its time-out", a)
	}
	bad := callTool(t, ctx, reg, p, "submit_flow_elicitation", map[string]any{"instance_id": instance, "elicitation_id": id,
		"response": map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved"}}})
	if txt, _ := bad["error_text"].(string); !strings.Contains(txt, "comments") {
		t.Fatalf("an answer without a required field = %v; want refused naming it", bad)
	}
	sub := callTool(t, ctx, reg, p, "submit_flow_elicitation", map[string]any{"instance_id": instance, "elicitation_id": id,
		"response": map[string]any{"action": "accept", "content": map[string]any{"approval_status": "rejected", "comments": "Too dear"}}})
	if sub["instance_id"] != instance || sub["error_text"] != nil {
		t.Fatalf("submit_flow_elicitation = %v", sub)
	}
	testwait.Until(t, "the run completes", func() bool {
		q := callTool(t, ctx, reg, p, "query_flow__buy", map[string]any{"instance_id": instance})
		return at(q, "status", "state") == "completed"
	})
	q := callTool(t, ctx, reg, p, "query_flow__buy", map[string]any{"instance_id": instance})
	if at(q, "output", "approval_status") != "rejected" || at(q, "output", "comments") != "Too dear" {
		t.Fatalf("query_flow__buy = %v", q)
	}
	_ = answer // rejected: drop is skipped, no tool call
}

// TestReplayReissuesPendingElicitations: an instance started with run_flow_async__
// waits for its question; replay_flow_pending_elicitation from a session whose client
// cannot show forms answers the pending question with its schema, and from one that
// can shows it there and applies the answer, after which the run completes.
func TestReplayReissuesPendingElicitations(t *testing.T) {
	t.Parallel()
	svc, p, answer, _ := workflows.InputRigForTest(t, "5m")
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	started := callTool(t, ctx, reg, p, "run_flow_async__buy", map[string]any{"item": "desk"})
	instance, _ := started["instance_id"].(string)
	testwait.Until(t, "the instance waits for input", func() bool {
		q := callTool(t, ctx, reg, p, "query_flow__buy", map[string]any{"instance_id": instance})
		return at(q, "status", "state") == "input_required"
	})
	plain := callTool(t, ctx, reg, p, "replay_flow_pending_elicitation", map[string]any{"instance_id": instance})
	es, _ := plain["elicitations"].([]any)
	if len(es) != 1 || at(es[0], "message") != "Approve desk?" || at(es[0], "requested_schema", "type") != "object" ||
		at(plain, "status", "state") != "input_required" {
		t.Fatalf("replay without forms = %v", plain)
	}
	client := &formClient{answers: []map[string]any{{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "ok"}}}}
	fctx := providers.WithCaller(ctx, client)
	done := callAsync(t, fctx, reg, p, "replay_flow_pending_elicitation", map[string]any{"instance_id": instance})
	if args := answer(map[string]any{"removed": true}); args["id"] != "desk" {
		t.Fatalf("drop got %v", args)
	}
	got := testwait.Recv(t, done, "replay's answer")
	if ids, _ := got["answered"].([]any); len(ids) != 1 || ids[0] != at(es[0], "elicitation_id") || at(got, "status", "state") != "completed" {
		t.Fatalf("replay = %v", got)
	}
	if asked := client.requests(); len(asked) != 1 || asked[0]["message"] != "Approve desk?" {
		t.Fatalf("the client was asked %v", asked)
	}
}

// TestElicitationToolsAnswerOnlyWhoStartedTheInstance: another person, an agent and
// another tenant get from submit_flow_elicitation and replay_flow_pending_elicitation
// the answer an instance that does not exist gets, and the question stays pending.
func TestElicitationToolsAnswerOnlyWhoStartedTheInstance(t *testing.T) {
	t.Parallel()
	svc, p, _, _ := workflows.InputRigForTest(t, "5m")
	reg := hubRegistry(t, svc)
	ctx := switchboard.WithPrincipal(context.Background(), p)
	started := callTool(t, ctx, reg, p, "run_flow_async__buy", map[string]any{"item": "desk"})
	instance, _ := started["instance_id"].(string)
	var pending []workflows.Elicitation
	testwait.Until(t, "the instance waits for input", func() bool {
		_, pending, _ = svc.Elicitations(ctx, p, instance)
		return len(pending) == 1
	})
	missing := callTool(t, ctx, reg, p, "replay_flow_pending_elicitation", map[string]any{"instance_id": "run_nope"})
	colleague := p
	colleague.UserID = "usr_other"
	agent := switchboard.Principal{TenantID: p.TenantID, Kind: switchboard.PrincipalAgent, AgentID: "agt_1", UserID: p.UserID, KeyID: "key_1"}
	stranger := switchboard.Principal{TenantID: "ten_x", Kind: switchboard.PrincipalUser, UserID: p.UserID}
	for name, who := range map[string]switchboard.Principal{"colleague": colleague, "agent": agent, "stranger": stranger} {
		wctx := switchboard.WithPrincipal(context.Background(), who)
		if got := callTool(t, wctx, reg, who, "replay_flow_pending_elicitation", map[string]any{"instance_id": instance}); got["error_text"] == nil || got["error_text"] != missing["error_text"] {
			t.Errorf("%s's replay = %v; want %v", name, got, missing)
		}
		got := callTool(t, wctx, reg, who, "submit_flow_elicitation", map[string]any{"instance_id": instance, "elicitation_id": pending[0].ID,
			"response": map[string]any{"action": "accept", "content": map[string]any{"approval_status": "approved", "comments": "x"}}})
		if got["error_text"] == nil || got["error_text"] != missing["error_text"] {
			t.Errorf("%s's submit = %v; want %v", name, got, missing)
		}
	}
	if _, still, _ := svc.Elicitations(ctx, p, instance); len(still) != 1 {
		t.Errorf("the question after the refusals = %+v; want still pending", still)
	}
}

// at is the value at a path of keys in decoded JSON (nil where there is none).
func at(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
