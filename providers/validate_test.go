package providers

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

func TestValidatorNamesTheField(t *testing.T) {
	t.Parallel()
	s, err := Reflect[schemaProbe]()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(s)
	v, err := NewValidator(raw)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      string
		wantField string // "" means valid
		wantMsg   string
	}{
		{name: "valid", args: `{"channel":"C1","count":3,"state":"closed"}`},
		{name: "empty body counts as {}", args: ``, wantField: "channel", wantMsg: "is required"},
		{name: "missing required", args: `{"count":1}`, wantField: "channel", wantMsg: "is required"},
		{name: "wrong type", args: `{"channel":"C1","count":"3"}`, wantField: "count", wantMsg: "must be integer, not string"},
		{name: "below minimum", args: `{"channel":"C1","count":0}`, wantField: "count"},
		{name: "not in enum", args: `{"channel":"C1","count":1,"state":"merged"}`, wantField: "state", wantMsg: `must be one of "open", "closed", "all"`},
		{name: "unknown argument", args: `{"channel":"C1","count":1,"chanel":"x"}`, wantField: "chanel", wantMsg: "is not a known argument"},
		{name: "nested field", args: `{"channel":"C1","count":1,"nested":{"flag":"yes"}}`, wantField: "nested.flag"},
		{name: "not JSON", args: `{"channel":`, wantField: "arguments"},
		{name: "not an object", args: `[1]`, wantField: "arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := v.Validate(json.RawMessage(tt.args))
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			e, ok := err.(*switchboard.Error)
			if !ok || e.Code != switchboard.CodeInvalid {
				t.Fatalf("Validate = %v, want an invalid *switchboard.Error", err)
			}
			if e.Field != tt.wantField {
				t.Errorf("field = %q, want %q (message %q)", e.Field, tt.wantField, e.Message)
			}
			if tt.wantMsg != "" && e.Message != tt.wantMsg {
				t.Errorf("message = %q, want %q", e.Message, tt.wantMsg)
			}
		})
	}
}
