package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard"
)

// Hints describe an operation's effects; they become the MCP tool annotations.
// Set every one deliberately: an unannotated MCP tool is taken as destructive.
type Hints struct {
	ReadOnly    bool // changes nothing upstream
	Destructive bool // may delete or overwrite what cannot be restored
	Idempotent  bool // calling twice with the same input has the effect of calling once
	// ClosedWorld is true when the operation touches only the hub itself; every
	// provider operation reaches an open world (the SaaS), so it is false there.
	ClosedWorld bool
}

// Retryable reports whether a failed attempt of the operation may be sent again.
func (h Hints) Retryable() bool { return h.ReadOnly || h.Idempotent }

// Info is what a client is told about an operation, apart from its schemas.
type Info struct {
	Name        string // snake_case, unique within the provider
	Title       string
	Description string
	DocsURL     string   // the upstream API documentation
	Scopes      []string // upstream scopes the operation needs
	Hints       Hints
	// Task says how a call of the operation runs as an MCP task (a tool's
	// execution.taskSupport); the zero value is TaskOptional.
	Task TaskSupport
	// AsksBeforeTask says the operation asks its client for input before its work
	// runs as a task: where the client takes tasks, the call is answered with the
	// operation's questions (input_required, one round each) until the operation
	// calls ContinueAsTask (or ends), and with the task from then.
	AsksBeforeTask bool
}

// TaskSupport says whether a tool's calls run as MCP tasks.
type TaskSupport string

// The task supports.
const (
	// TaskOptional: a call runs as a task when its client asks for one (the task
	// parameter); where the server decides (2026-07-28, a client that takes tasks
	// and asks nothing) it answers directly, as a call that ends soon should.
	TaskOptional TaskSupport = ""
	// TaskPreferred: listed as optional, but a call runs as a task wherever its client
	// takes tasks (the server decides so on 2026-07-28): for work that takes long.
	TaskPreferred TaskSupport = "preferred"
	// TaskForbidden: a call always runs directly and answers at once.
	TaskForbidden TaskSupport = "forbidden"
	// TaskRequired: a call runs only as a task; a client that does not take tasks is
	// refused.
	TaskRequired TaskSupport = "required"
)

// Op is the non-generic face of an Operation, so a Registry can hold any of them.
type Op interface {
	Info() Info
	// InputSchema and OutputSchema reflect the Go types; the Registry calls them once.
	// An operation that answers in content of no one schema (the result of another
	// tool it calls) has no output schema: nil.
	InputSchema() (*jsonschema.Schema, error)
	OutputSchema() (*jsonschema.Schema, error)
	// Invoke decodes the (already validated) arguments, runs the operation and returns its output.
	Invoke(ctx context.Context, c *Call, args json.RawMessage) (any, error)
}

// Operation is one typed upstream operation. In and Out are structs; their JSON
// Schemas are reflected from the fields' json, jsonschema (description) and schema
// (enum, default, minimum, …) tags.
type Operation[In, Out any] struct {
	Name        string
	Title       string
	Description string
	DocsURL     string
	Scopes      []string
	Hints       Hints
	// Task and AsksBeforeTask are the Info's (how a call runs as an MCP task).
	Task           TaskSupport
	AsksBeforeTask bool
	Run            func(ctx context.Context, c *Call, in In) (Out, error)
}

var _ Op = (*Operation[struct{}, struct{}])(nil)

// Info returns the operation's description.
func (o *Operation[In, Out]) Info() Info {
	return Info{Name: o.Name, Title: o.Title, Description: o.Description, DocsURL: o.DocsURL, Scopes: o.Scopes, Hints: o.Hints,
		Task: o.Task, AsksBeforeTask: o.AsksBeforeTask}
}

// InputSchema reflects In.
func (o *Operation[In, Out]) InputSchema() (*jsonschema.Schema, error) { return Reflect[In]() }

// OutputSchema reflects Out.
func (o *Operation[In, Out]) OutputSchema() (*jsonschema.Schema, error) { return Reflect[Out]() }

// ZeroOutput returns the JSON of Out's zero value, the least an operation can
// answer: its output schema must accept it, so optional fields are omitted rather
// than sent as zero values that break their enums, patterns or formats.
func (o *Operation[In, Out]) ZeroOutput() (json.RawMessage, error) {
	var out Out
	return MarshalOutput(out)
}

// Invoke decodes args into In, runs the operation with the retry policy its hints
// allow, and returns Out.
func (o *Operation[In, Out]) Invoke(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
	var in In
	if len(args) > 0 && !bytes.Equal(args, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, &switchboard.Error{Code: switchboard.CodeInvalid, Message: fmt.Sprintf("arguments do not match the input schema: %v", err)}
		}
	}
	out, err := o.Run(withRetryable(ctx, o.Hints.Retryable()), c, in)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Checker is an operation that checks its arguments beyond what its input schema can
// say (at least one field to change, fields that go together), so a call that would
// fail is refused with the schema's checks, before anyone is asked to confirm it or it
// is queued. Tool.Validate runs it after the schema.
type Checker interface {
	Check(args json.RawMessage) error
}

// InputChecker is an input type with a check of its own; an Operation whose In (or
// *In) is one is a Checker.
type InputChecker interface {
	Check() error
}

// Check decodes args and runs In's own check, if In has one.
func (o *Operation[In, Out]) Check(args json.RawMessage) error {
	var in In
	if _, ok := any(&in).(InputChecker); !ok {
		return nil
	}
	if len(args) > 0 && !bytes.Equal(args, []byte("null")) {
		if err := json.Unmarshal(args, &in); err != nil {
			return nil // the schema's check, or Invoke, says what is wrong
		}
	}
	return any(&in).(InputChecker).Check()
}

type retryableKey struct{}

func withRetryable(ctx context.Context, ok bool) context.Context {
	return context.WithValue(ctx, retryableKey{}, ok)
}

// retryable reports whether requests made under ctx may be retried; only operations
// whose hints say so are.
func retryable(ctx context.Context) bool {
	ok, _ := ctx.Value(retryableKey{}).(bool)
	return ok
}
