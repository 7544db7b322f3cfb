package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/runs"
)

// InputStep is what a step that asks the run's person for data asks: a message and
// the form of the answer, a JSON Schema object of flat properties (strings, numbers,
// integers, booleans, and strings from an enum), as MCP's form elicitation shows it.
type InputStep struct {
	// Message is what the person reads; it may hold ${{ }} expressions over params and
	// earlier steps.
	Message string `json:"message"`
	// Schema is the answer's JSON Schema: the step's output is the answer, which later
	// steps read as steps.<name>.output.<field>.
	Schema json.RawMessage `json:"schema"`
}

// DefaultInputTimeout is how long a step that asks its person shows them the question
// (an MCP elicitation) when the step names no timeout of its own. Once it passes the
// run still waits: the answer may be given later with submit_flow_elicitation.
const DefaultInputTimeout = 5 * time.Minute

// InputTool is the tool name step records and plans give a step that asks its person.
const InputTool = "ask_person"

// StepWaiting is the state of an asking step's record while its person has not
// answered: the pending elicitation, whose id is the record's.
const StepWaiting StepState = "waiting"

// inputSpec is the provider of an asking step's stand-in tool.
var inputSpec = &providers.Spec{Name: "person", Title: "The run's person", Connectionless: true}

// inputTool is what Check binds an asking step to: a stand-in tool whose output schema
// is the answer's, so expressions that read the answer are checked like any output.
func inputTool(in *InputStep) *providers.Tool {
	return &providers.Tool{Name: InputTool, Provider: inputSpec, OutputSchema: in.Schema,
		Info: providers.Info{Name: InputTool, Title: "Ask the run's person", Hints: providers.Hints{ReadOnly: true, Idempotent: true, ClosedWorld: true}}}
}

// inputTimeout is how long the step's person is asked.
func (s *StepProgram) inputTimeout() time.Duration {
	if s.Timeout > 0 {
		return time.Duration(s.Timeout)
	}
	return DefaultInputTimeout
}

// formTypes are the property types an elicitation form may have.
var formTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true}

// inputStep checks an asking step: it calls no tool, runs once, and its schema is a
// form an MCP client can show.
func (c *compiler) inputStep(s *StepProgram) {
	name := s.Name
	if s.Tool != "" {
		c.add(name, "input", "a step either calls a tool or asks its person (input), not both; leave tool out")
	}
	if s.Connection != "" || len(s.Args) > 0 {
		c.add(name, "input", "a step that asks its person takes no connection or args")
	}
	if s.Foreach != "" {
		c.add(name, "foreach", "a step that asks its person asks once; it cannot run per item")
	}
	if s.OnError == OnErrorRetry || s.Retry != nil {
		c.add(name, "on_error", "a step that asks its person is not retried; use abort or continue")
	}
	if s.Input.Message == "" {
		c.add(name, "input.message", "is required: what the person is asked")
	}
	if len(s.Input.Schema) == 0 || string(s.Input.Schema) == "null" {
		c.add(name, "input.schema", "is required: a JSON Schema object of the answer's fields")
		return
	}
	var sch struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(s.Input.Schema, &sch); err != nil || sch.Type != "object" {
		c.add(name, "input.schema", `must be a JSON Schema with "type": "object" and properties`)
		return
	}
	if len(sch.Properties) == 0 {
		c.add(name, "input.schema", "must have at least one property")
	}
	for _, k := range sortedKeys(sch.Properties) {
		t, _ := sch.Properties[k]["type"].(string)
		if !formTypes[t] {
			c.add(name, "input.schema.properties."+k, "must have type string, number, integer or boolean (a form shows flat fields), not %q", t)
		}
	}
	for _, r := range sch.Required {
		if _, ok := sch.Properties[r]; !ok {
			c.add(name, "input.schema.required", "names %s, which is not one of its properties", r)
		}
	}
	if _, err := providers.NewValidator(s.Input.Schema); err != nil {
		c.add(name, "input.schema", "is not a valid JSON Schema: %v", err)
	}
}

// inputMessage compiles the message of an asking step.
func (c *compiler) inputMessage(s *StepProgram) {
	msg, errs := compileValue(c.env.plain, "input.message", s.Input.Message)
	for _, e := range errs {
		c.add(s.Name, e.path, "%v", e.err)
	}
	if msg != nil {
		for _, x := range msg.exprs() {
			c.references(s, "input.message", x)
		}
	}
	s.message = msg
}

// Elicitation is a question an asking step put to its run's person: pending until
// they answer it (through their MCP client's form, submit_flow_elicitation or the
// approval page).
type Elicitation struct {
	ID         string          `json:"elicitation_id" jsonschema:"The question's id, for submit_flow_elicitation"`
	InstanceID string          `json:"instance_id" jsonschema:"The flow instance that asks"`
	Step       string          `json:"step" jsonschema:"The step that asks"`
	Message    string          `json:"message" jsonschema:"What the person is asked"`
	Schema     json.RawMessage `json:"requested_schema" jsonschema:"The JSON Schema of the answer's content"`
	// ExpiresAt is when the question stops being shown; after it the answer may still
	// be submitted, and the run goes on.
	ExpiresAt time.Time `json:"expires_at" jsonschema:"When the question stops being shown; it may still be answered after"`
	// TimedOut says ExpiresAt passed.
	TimedOut bool `json:"timed_out" jsonschema:"Whether it was shown for its whole timeout without an answer"`

	workflow string        // the instance's workflow
	shown    time.Duration // how long the step shows its question
}

// question is the sealed input of an asking step's record.
type question struct {
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema"`
	// Timeout is how long the person is asked, in seconds.
	Timeout float64 `json:"timeout"`
}

// declinedCode is the error code of an asking step whose person declined or dismissed it.
const declinedCode = "declined"

// ask runs an asking step: the answer recorded earlier, else the question recorded (and
// audited) as pending and the run paused until it is answered.
func (x *execution) ask(ctx context.Context, s *StepProgram, rec *StepRecord, vars map[string]any) (any, error) {
	switch p := x.prior[s.Name][wholeStep]; {
	case p != nil && p.State == StepWaiting:
		return nil, &runs.Pause{Message: x.pauseMessage(s, p.ID)}
	case p != nil && p.State == StepFailed && p.ErrorCode == declinedCode:
		// The person declined: the step fails as it was answered, not asked again.
		return nil, &switchboard.Error{Code: switchboard.CodeCanceled, Message: p.ErrorMessage}
	}
	v, err := s.message.eval(ctx, vars)
	if err != nil {
		return nil, switchboard.Invalid("input.message", err.Error())
	}
	msg, ok := v.(string)
	if !ok {
		raw, _ := json.Marshal(v)
		msg = string(raw)
	}
	q, err := json.Marshal(question{Message: msg, Schema: s.Input.Schema, Timeout: s.inputTimeout().Seconds()})
	if err != nil {
		return nil, switchboard.Internal(err)
	}
	store := context.WithoutCancel(ctx)
	rec.Tool, rec.Attempts = InputTool, rec.Attempts+1
	if err := x.e.store.startStep(store, rec, q); err != nil {
		return nil, err
	}
	if err := x.e.store.waitStep(store, rec); err != nil {
		return nil, err
	}
	recordInput(x.e.caller, router.KindConfirmationAsked, x.run.Principal, x.run.Input.Workflow,
		fmt.Sprintf("workflow %s run %s step %s asks its person (elicitation %s)", x.run.Input.Workflow, x.run.ID, s.Name, rec.ID))
	return nil, &runs.Pause{Message: x.pauseMessage(s, rec.ID)}
}

func (x *execution) pauseMessage(s *StepProgram, id string) string {
	return fmt.Sprintf("step %s asks its person for input (elicitation %s)", s.Name, id)
}

// inputRecorder is what leaves the audit rows of an asking step: the router.
type inputRecorder interface {
	RecordConfirmation(c router.Confirmation)
}

// recordInput leaves the audit row of a question asked or answered, when rec keeps them.
func recordInput(rec any, kind audit.Kind, who switchboard.Principal, workflow, detail string) {
	if r, ok := rec.(inputRecorder); ok {
		r.RecordConfirmation(router.Confirmation{Kind: kind, Principal: who, Tool: RunToolName(workflow, 0), Detail: detail})
	}
}
