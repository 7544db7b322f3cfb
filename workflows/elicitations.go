package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// ElicitationResponse is a person's answer to an asking step, as MCP's elicitation
// result has it: accept with the form's content, decline or cancel.
type ElicitationResponse struct {
	Action  string         `json:"action" jsonschema:"accept, decline or cancel" schema:"enum=accept|decline|cancel"`
	Content map[string]any `json:"content,omitempty" jsonschema:"The answer's fields, as the elicitation's requested_schema describes them (with accept)"`
}

// Elicitations lists the questions one of the principal's flow instances waits for
// its person to answer. Another principal's instance is not found.
func (s *Service) Elicitations(ctx context.Context, p switchboard.Principal, instanceID string) (runs.View, []Elicitation, error) {
	v, err := s.workflowRun(ctx, p, instanceID)
	if err != nil {
		return runs.View{}, nil, err
	}
	recs, err := s.Store.Steps(ctx, p.TenantID, instanceID)
	if err != nil {
		return runs.View{}, nil, err
	}
	var out []Elicitation
	now := s.Store.now()
	for i := range recs {
		r := &recs[i]
		if r.State != StepWaiting {
			continue
		}
		q, err := s.question(ctx, r)
		if err != nil {
			return runs.View{}, nil, err
		}
		e := Elicitation{ID: r.ID, InstanceID: instanceID, Step: r.Step, Message: q.Message, Schema: q.Schema,
			workflow: v.Workflow, shown: time.Duration(q.Timeout * float64(time.Second))}
		if r.StartedAt != nil {
			e.ExpiresAt = r.StartedAt.Add(e.shown).UTC()
			e.TimedOut = !now.Before(e.ExpiresAt)
		}
		out = append(out, e)
	}
	return v, out, nil
}

// question opens what an asking step's record asked.
func (s *Service) question(ctx context.Context, r *StepRecord) (question, error) {
	raw, err := s.Store.Input(ctx, r)
	if err != nil {
		return question{}, switchboard.Internal(fmt.Errorf("open the question of step %s of run %s: %w", r.Step, r.RunID, err))
	}
	var q question
	if err := json.Unmarshal(raw, &q); err != nil {
		return question{}, switchboard.Internal(fmt.Errorf("read the question of step %s of run %s: %w", r.Step, r.RunID, err))
	}
	return q, nil
}

// SubmitElicitation records the answer to one of the questions a flow instance of the
// principal waits for (timed out or not) and resumes the instance: accept checks the
// content against the question's schema (a bad one changes nothing); decline and
// cancel fail the step, and the workflow goes on as its on_error says. Another
// principal's instance is not found; how is what the audit row says of where the
// answer came from.
func (s *Service) SubmitElicitation(ctx context.Context, p switchboard.Principal, instanceID, elicitationID string, resp ElicitationResponse, how string) (runs.View, error) {
	switch {
	case strings.TrimSpace(instanceID) == "":
		return runs.View{}, switchboard.Invalid("instance_id", "is required")
	case strings.TrimSpace(elicitationID) == "":
		return runs.View{}, switchboard.Invalid("elicitation_id", "is required")
	}
	switch resp.Action {
	case "accept", "decline", "cancel":
	default:
		return runs.View{}, switchboard.Invalid("response.action", "must be accept, decline or cancel")
	}
	v, err := s.workflowRun(ctx, p, instanceID)
	if err != nil {
		return runs.View{}, err
	}
	recs, err := s.Store.Steps(ctx, p.TenantID, instanceID)
	if err != nil {
		return runs.View{}, err
	}
	var rec *StepRecord
	for i := range recs {
		if recs[i].ID == elicitationID && recs[i].Tool == InputTool {
			rec = &recs[i]
		}
	}
	if rec == nil {
		return runs.View{}, switchboard.NotFound(fmt.Sprintf("elicitation %s of flow instance %s", elicitationID, instanceID))
	}
	if rec.State != StepWaiting || !v.Paused() {
		return runs.View{}, switchboard.Errorf(switchboard.CodeConflict, "elicitation %s was answered already (step %s is %s); the flow instance is %s", elicitationID, rec.Step, rec.State, StatusOf(v).State)
	}
	var ok bool
	detail := fmt.Sprintf("workflow %s run %s step %s: %s (elicitation %s, %s)", v.Workflow, instanceID, rec.Step, resp.Action, elicitationID, how)
	kind := router.KindConfirmationAccepted
	if resp.Action == "accept" {
		q, err := s.question(ctx, rec)
		if err != nil {
			return runs.View{}, err
		}
		content, err := json.Marshal(resp.Content)
		if err != nil || resp.Content == nil {
			content = []byte("{}")
		}
		val, err := providers.NewValidator(q.Schema)
		if err != nil {
			return runs.View{}, switchboard.Internal(fmt.Errorf("the schema of step %s: %w", rec.Step, err))
		}
		if err := val.Validate(content); err != nil {
			e := switchboard.AsError(err)
			field := "response.content"
			if e.Field != "" && e.Field != "arguments" {
				field += "." + strings.TrimPrefix(e.Field, "arguments.")
			}
			return runs.View{}, switchboard.Invalid(field, e.Message)
		}
		ok, err = s.Store.answerStep(ctx, rec, StepCompleted, "", "", content)
		if err != nil {
			return runs.View{}, err
		}
	} else {
		kind = router.KindConfirmationDeclined
		msg := fmt.Sprintf("the person declined to answer step %s", rec.Step)
		if resp.Action == "cancel" {
			msg = fmt.Sprintf("the person dismissed the question of step %s", rec.Step)
		}
		ok, err = s.Store.answerStep(ctx, rec, StepFailed, declinedCode, msg, nil)
		if err != nil {
			return runs.View{}, err
		}
	}
	if !ok {
		return runs.View{}, switchboard.Errorf(switchboard.CodeConflict, "elicitation %s was answered meanwhile", elicitationID)
	}
	recordInput(s.Router, kind, p, v.Workflow, detail)
	return s.Runs.Resume(ctx, p, instanceID)
}

// askPerson puts a pending question to the person behind the call in ctx (their MCP
// client's form) for as long as the question is shown, and applies their answer. It
// reports whether an answer was applied; asked is false when the call's client cannot
// show a form (or there is none).
func (s *Service) askPerson(ctx context.Context, p switchboard.Principal, e Elicitation, how string) (answered, asked bool, err error) {
	c := providers.CallerFrom(ctx)
	if c == nil {
		return false, false, nil
	}
	var schema map[string]any
	_ = json.Unmarshal(e.Schema, &schema)
	params, err := json.Marshal(mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: e.Message, RequestedSchema: schema})
	if err != nil {
		return false, false, switchboard.Internal(err)
	}
	wait := time.Until(e.ExpiresAt)
	if e.TimedOut || wait <= 0 {
		wait = DefaultInputTimeout // asked again (replay): shown as long as at first
		if e.shown > 0 {
			wait = e.shown
		}
	}
	actx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	raw, err := c.Ask(actx, string(mcp.MethodElicitationCreate), params)
	if err != nil {
		if errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			recordInput(s.Router, router.KindConfirmationTimedOut, p, e.workflow,
				fmt.Sprintf("workflow %s run %s step %s: nobody answered in time (elicitation %s); it may be answered with submit_flow_elicitation", e.workflow, e.InstanceID, e.Step, e.ID))
			return false, true, nil
		}
		if ctx.Err() != nil {
			return false, true, ctx.Err()
		}
		return false, false, nil // the client cannot show it: the caller hears input_required
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return false, true, nil
	}
	resp := ElicitationResponse{Action: string(res.Action)}
	if m, ok := res.Content.(map[string]any); ok {
		resp.Content = m
	}
	if _, err := s.SubmitElicitation(context.WithoutCancel(ctx), p, e.InstanceID, e.ID, resp, how); err != nil {
		return false, true, err
	}
	return true, true, nil
}

// askWhilePaused puts the questions a run paused for to the person behind the call
// (their client's form), and waits for the run again after each answer, until it ends,
// or waits for a question the client cannot show or nobody answered in time. toEnd
// waits for the run as long as ctx lasts (waitUp).
func (s *Service) askWhilePaused(ctx context.Context, p switchboard.Principal, name string, v runs.View, toEnd bool) runs.View {
	for v.Paused() && ctx.Err() == nil {
		_, pending, err := s.Elicitations(ctx, p, v.ID)
		if err != nil || len(pending) == 0 {
			return v
		}
		answered, _, err := s.askPerson(ctx, p, pending[0], "the client's form")
		if err != nil || !answered {
			return v
		}
		if v, err = s.Runs.Get(ctx, p, v.ID); err != nil {
			return v
		}
		if v.State == runs.StateWorking {
			v = s.waitUp(ctx, p, name, v, toEnd)
		}
	}
	return v
}

// waitingText says which questions a flow waits for and how to answer them.
func waitingText(es []Elicitation, approvalURL string) string {
	if len(es) == 0 {
		return "a step asks its person; replay the question with replay_flow_pending_elicitation"
	}
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "step %s asks: %s (elicitation_id %s", e.Step, e.Message, e.ID)
		if e.TimedOut {
			b.WriteString(", timed out")
		}
		b.WriteString(")")
	}
	b.WriteString(". Ask the person and answer with submit_flow_elicitation {instance_id, elicitation_id, response: {action, content}}, or have the question shown again with replay_flow_pending_elicitation.")
	if approvalURL != "" {
		b.WriteString(" The person may also answer it on its approval page: " + approvalURL)
	}
	return b.String()
}

// Replayed is what replay_flow_pending_elicitation answers: how each pending question
// fared when put to the caller again, and the instance's status after.
type Replayed struct {
	Status       FlowStatus    `json:"status" jsonschema:"The flow instance's status after the answers"`
	Elicitations []Elicitation `json:"elicitations" jsonschema:"The questions still pending (their client could not show them, or nobody answered in time)"`
	Answered     []string      `json:"answered" jsonschema:"The elicitation ids answered in the client's form"`
}

// ReplayElicitations puts the pending questions of one of the principal's flow
// instances to the calling session again (its client's form), applying each answer;
// the ones left pending are returned with their schemas, to answer with
// SubmitElicitation. Another principal's instance is not found.
func (s *Service) ReplayElicitations(ctx context.Context, p switchboard.Principal, instanceID string) (Replayed, error) {
	if strings.TrimSpace(instanceID) == "" {
		return Replayed{}, switchboard.Invalid("instance_id", "is required")
	}
	v, pending, err := s.Elicitations(ctx, p, instanceID)
	if err != nil {
		return Replayed{}, err
	}
	out := Replayed{Elicitations: []Elicitation{}, Answered: []string{}}
	for _, e := range pending {
		recordInput(s.Router, router.KindConfirmationAsked, p, v.Workflow,
			fmt.Sprintf("workflow %s run %s step %s asked again (elicitation %s, replay)", v.Workflow, instanceID, e.Step, e.ID))
		answered, _, err := s.askPerson(ctx, p, e, "replay in the client's form")
		if err != nil {
			return Replayed{}, err
		}
		if answered {
			out.Answered = append(out.Answered, e.ID)
		}
	}
	if len(out.Answered) > 0 {
		if v, err = s.Runs.Get(ctx, p, instanceID); err == nil && v.State == runs.StateWorking {
			v = s.wait(ctx, p, v.Workflow, v)
		}
	}
	if _, left, err := s.Elicitations(ctx, p, instanceID); err == nil && left != nil {
		out.Elicitations = left
	}
	out.Status = StatusOf(v)
	return out, nil
}
