package providers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

type patchIn struct {
	ID    string  `json:"id" jsonschema:"What to change"`
	Title *string `json:"title,omitempty" jsonschema:"New title"`
	Body  *string `json:"body,omitempty" jsonschema:"New body"`
}

func (in *patchIn) Check() error {
	if in.Title == nil && in.Body == nil {
		return switchboard.Invalid("arguments", "give at least one field to change: title or body")
	}
	return nil
}

// TestValidateRunsTheInputsOwnCheck: a call its input's own check refuses (nothing to
// change) fails Tool.Validate, the check made before a call is confirmed or queued,
// naming the field and the reason; a call the check takes, or a tool with no check,
// passes.
func TestValidateRunsTheInputsOwnCheck(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	patch := &Operation[patchIn, echoOut]{Name: "patch", Title: "Patch", Description: "Change a thing.",
		Run: func(context.Context, *Call, patchIn) (echoOut, error) { return echoOut{}, nil }}
	if err := r.Register(fakeSpec("fake", patch, echoOp("echo", Hints{ReadOnly: true}))); err != nil {
		t.Fatal(err)
	}
	tool, _ := r.Tool("fake_patch")
	err := tool.Validate(json.RawMessage(`{"id":"a"}`))
	if e := switchboard.AsError(err); err == nil || e.Code != switchboard.CodeInvalid || e.Field != "arguments" {
		t.Errorf("Validate with nothing to change = %v, want invalid naming arguments", err)
	}
	if err := tool.Validate(json.RawMessage(`{"id":"a","title":"new"}`)); err != nil {
		t.Errorf("Validate with a title = %v", err)
	}
	// The schema's own failure comes first.
	if e := switchboard.AsError(tool.Validate(json.RawMessage(`{"title":"new"}`))); e == nil || e.Field != "id" {
		t.Errorf("Validate without id = %v, want the missing id named", e)
	}
	echo, _ := r.Tool("fake_echo")
	if err := echo.Validate(json.RawMessage(`{"text":"hi"}`)); err != nil {
		t.Errorf("Validate of a tool with no check = %v", err)
	}
}
