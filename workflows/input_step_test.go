package workflows

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// askDef asks the run's person whether to remove the item, then removes it when they
// approved; its outputs are their answer.
const askDef = `
name: buy
parameters: {type: object, properties: {item: {type: string}}, required: [item]}
steps:
  - name: approval
    timeout: TIMEOUT
    input:
      message: "Approve ${{ params.item }}?"
      schema:
        type: object
        properties:
          approval_status: {type: string, enum: [approved, rejected]}
          comments: {type: string}
        required: [approval_status, comments]
  - name: drop
    tool: flow_remove
    needs: [approval]
    if: ${{ steps.approval.output.approval_status == "approved" }}
    args: {id: "${{ params.item }}"}
outputs:
  approval_status: ${{ steps.approval.output.approval_status }}
  comments: ${{ steps.approval.output.comments }}
`

// AskDefForTest is askDef with the asking step's timeout.
func AskDefForTest(timeout string) string { return strings.Replace(askDef, "TIMEOUT", timeout, 1) }

// InputRigForTest is a Service whose runs' steps call a fake caller (answer answers
// the next call, with the arguments it got) with buy saved, and the audit rows of
// its questions so far.
func InputRigForTest(t *testing.T, timeout string) (svc *Service, p switchboard.Principal, answer func(out any) map[string]any, audit func() []string) {
	t.Helper()
	svc, fr, r, _ := serviceRig(t, router.Policy{Confirm: router.ConfirmNever})
	src := AskDefForTest(timeout)
	def, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Create(context.Background(), r.p, def, src, false); err != nil {
		t.Fatal(err)
	}
	answer = func(out any) map[string]any {
		c := r.caller.next(t)
		c.answer(out, nil)
		return c.args
	}
	audit = func() []string {
		fr.mu.Lock()
		defer fr.mu.Unlock()
		return append([]string(nil), fr.confirmations...)
	}
	return svc, r.p, answer, audit
}

// waitPaused waits for the run to pause (or end).
func waitPaused(t *testing.T, svc *Service, p switchboard.Principal, id string) runs.View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	v, err := svc.Runs.Wait(ctx, p, id, 10*time.Millisecond)
	if err != nil {
		t.Fatalf("wait for run %s: %v", id, err)
	}
	return v
}

// TestInputStepIsCheckedWhenSaved: a step that asks its person names each mistake of
// its definition by step and field: a schema that is no object of flat fields, a
// required field it lacks, no message, a tool beside it, a retry, and an expression
// reading a field the answer's schema does not have.
func TestInputStepIsCheckedWhenSaved(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ step, want string }{
		"nested field": {`{name: ask, input: {message: hi, schema: {type: object, properties: {who: {type: object}}}}}`,
			`steps.ask.input.schema.properties.who: must have type string, number, integer or boolean`},
		"not an object": {`{name: ask, input: {message: hi, schema: {type: string}}}`, `steps.ask.input.schema: must be a JSON Schema with "type": "object"`},
		"no schema":     {`{name: ask, input: {message: hi}}`, `steps.ask.input.schema: is required`},
		"no message":    {`{name: ask, input: {schema: {type: object, properties: {ok: {type: boolean}}}}}`, `steps.ask.input.message: is required`},
		"required unknown": {`{name: ask, input: {message: hi, schema: {type: object, properties: {ok: {type: boolean}}, required: [why]}}}`,
			`steps.ask.input.schema.required: names why`},
		"tool too": {`{name: ask, tool: flow_read, input: {message: hi, schema: {type: object, properties: {ok: {type: boolean}}}}}`,
			`steps.ask.input: a step either calls a tool or asks its person`},
		"retry": {`{name: ask, on_error: retry, input: {message: hi, schema: {type: object, properties: {ok: {type: boolean}}}}}`,
			`steps.ask.on_error: a step that asks its person is not retried`},
		"unknown input field": {`{name: ask, input: {message: hi, form: {}, schema: {type: object, properties: {ok: {type: boolean}}}}}`,
			`steps.ask.input.form: is not a field`},
	}
	for name, c := range cases {
		src := "name: w\nsteps:\n  - " + c.step + "\n"
		def, err := Parse([]byte(src))
		if err == nil {
			_, err = Compile(def)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
	}
	// The answer's fields are checked where later steps read them.
	r := newEngineRig(t)
	bad := strings.Replace(AskDefForTest("5m"), "steps.approval.output.comments }}\n", "steps.approval.output.comment }}\n", 1)
	def, err := Parse([]byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := CompileAndCheck(context.Background(), def, r.eng.catalog, r.p); err == nil || !strings.Contains(err.Error(), "comment") {
		t.Errorf("an output reading a field the answer lacks = %v; want refused naming it", err)
	}
	good, _ := Parse([]byte(AskDefForTest("5m")))
	if _, _, err := CompileAndCheck(context.Background(), good, r.eng.catalog, r.p); err != nil {
		t.Errorf("the asking workflow = %v", err)
	}
}

// TestInputStepAcceptResumesTheRun: the run pauses input_required at the step, holding
// the question (its message evaluated, its schema, 5 minutes by default); an answer
// that does not fit the schema is refused naming the field and changes nothing; a good
// one resumes the run, whose later steps and outputs read it. The question and the
// answer leave audit rows; a second answer is a conflict.
func TestInputStepAcceptResumesTheRun(t *testing.T) {
	t.Parallel()
	svc, p, answer, audit := InputRigForTest(t, "0s")
	ctx := context.Background()
	v, err := svc.Start(ctx, p, "buy", json.RawMessage(`{"item":"laptop"}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v = waitPaused(t, svc, p, v.ID)
	if v.State != runs.StateInputRequired || !v.Paused() {
		t.Fatalf("run = %+v; want paused input_required", v)
	}
	_, pending, err := svc.Elicitations(ctx, p, v.ID)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	e := pending[0]
	if e.Message != "Approve laptop?" || e.Step != "approval" || !strings.Contains(string(e.Schema), "approval_status") || e.TimedOut ||
		e.ExpiresAt.Sub(time.Now()) < 4*time.Minute {
		t.Fatalf("elicitation = %+v; want the evaluated message, the schema and 5 minutes", e)
	}
	if got := audit(); strings.Join(got, ",") != "confirmation_asked" {
		t.Fatalf("audit = %v; want the question's row", got)
	}
	_, err = svc.SubmitElicitation(ctx, p, v.ID, e.ID, ElicitationResponse{Action: "accept", Content: map[string]any{"approval_status": "maybe", "comments": "?"}}, "test")
	if fe := switchboard.AsError(err); fe.Code != switchboard.CodeInvalid || !strings.HasPrefix(fe.Field, "response.content") {
		t.Fatalf("an answer off the schema = %v; want invalid naming response.content", err)
	}
	if _, still, _ := svc.Elicitations(ctx, p, v.ID); len(still) != 1 {
		t.Fatalf("a refused answer changed the question: %+v", still)
	}
	if _, err := svc.SubmitElicitation(ctx, p, v.ID, e.ID, ElicitationResponse{Action: "accept", Content: map[string]any{"approval_status": "approved", "comments": "fine"}}, "test"); err != nil {
		t.Fatal(err)
	}
	if args := answer(map[string]any{"removed": true}); args["id"] != "laptop" {
		t.Fatalf("drop got %v", args)
	}
	end := waitPaused(t, svc, p, v.ID)
	var res Result
	if end.State != runs.StateCompleted || json.Unmarshal(end.Output, &res) != nil || res.Outputs["approval_status"] != "approved" || res.Outputs["comments"] != "fine" {
		t.Fatalf("run ended %+v (%s)", end, end.Output)
	}
	if got := audit(); strings.Join(got, ",") != "confirmation_asked,confirmation_accepted" {
		t.Errorf("audit = %v; want asked and accepted", got)
	}
	if _, err := svc.SubmitElicitation(ctx, p, v.ID, e.ID, ElicitationResponse{Action: "accept", Content: map[string]any{"approval_status": "rejected", "comments": "no"}}, "test"); switchboard.CodeOf(err) != switchboard.CodeConflict {
		t.Errorf("a second answer = %v; want conflict", err)
	}
}

// TestInputStepDeclineFailsTheStep: a declined question fails its step, and with it
// the run (on_error abort); nothing after it runs, and the decline is audited.
func TestInputStepDeclineFailsTheStep(t *testing.T) {
	t.Parallel()
	svc, p, _, audit := InputRigForTest(t, "1m")
	ctx := context.Background()
	v, err := svc.Start(ctx, p, "buy", json.RawMessage(`{"item":"laptop"}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPaused(t, svc, p, v.ID)
	_, pending, _ := svc.Elicitations(ctx, p, v.ID)
	if len(pending) != 1 {
		t.Fatalf("pending = %+v", pending)
	}
	if _, err := svc.SubmitElicitation(ctx, p, v.ID, pending[0].ID, ElicitationResponse{Action: "decline"}, "test"); err != nil {
		t.Fatal(err)
	}
	end := waitPaused(t, svc, p, v.ID)
	if end.State != runs.StateFailed || end.Error == nil || !strings.Contains(end.Error.Message, "declined") {
		t.Fatalf("run ended %+v; want failed saying the person declined", end)
	}
	st, err := svc.Status(ctx, p, v.ID)
	if err != nil || len(st.Steps) != 1 || st.Steps[0].Status != StepFailed {
		t.Fatalf("steps = %+v, %v; want only the asking step, failed", st.Steps, err)
	}
	if got := audit(); strings.Join(got, ",") != "confirmation_asked,confirmation_declined" {
		t.Errorf("audit = %v; want asked and declined", got)
	}
}

// TestInputAnswersOnlyToWhoStartedTheRun: another person of the tenant, an agent of
// the tenant and another tenant neither see nor answer the question, and hear what
// they would of a run that does not exist.
func TestInputAnswersOnlyToWhoStartedTheRun(t *testing.T) {
	t.Parallel()
	svc, p, _, _ := InputRigForTest(t, "1m")
	ctx := context.Background()
	v, err := svc.Start(ctx, p, "buy", json.RawMessage(`{"item":"laptop"}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPaused(t, svc, p, v.ID)
	_, pending, _ := svc.Elicitations(ctx, p, v.ID)
	if len(pending) != 1 {
		t.Fatalf("pending = %+v", pending)
	}
	_, _, errMissing := svc.Elicitations(ctx, p, "run_nope")
	colleague := p
	colleague.UserID = "usr_other"
	agent := switchboard.Principal{TenantID: p.TenantID, Kind: switchboard.PrincipalAgent, AgentID: "agt_1", UserID: p.UserID, KeyID: "key_1"}
	stranger := switchboard.Principal{TenantID: "ten_x", Kind: switchboard.PrincipalUser, UserID: p.UserID}
	ok := ElicitationResponse{Action: "accept", Content: map[string]any{"approval_status": "approved", "comments": "mine"}}
	for name, who := range map[string]switchboard.Principal{"colleague": colleague, "agent": agent, "stranger": stranger} {
		if _, _, err := svc.Elicitations(ctx, who, v.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound || err.Error() != errMissing.Error() {
			t.Errorf("%s lists the questions: %v; want %v", name, err, errMissing)
		}
		if _, err := svc.SubmitElicitation(ctx, who, v.ID, pending[0].ID, ok, "test"); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("%s answers: %v; want not found", name, err)
		}
	}
	if _, still, _ := svc.Elicitations(ctx, p, v.ID); len(still) != 1 {
		t.Errorf("the question after the refusals = %+v; want still pending", still)
	}
}
