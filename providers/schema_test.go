package providers

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type schemaProbe struct {
	PageInput
	Channel string   `json:"channel" jsonschema:"Channel ID"`
	State   *string  `json:"state,omitempty" jsonschema:"Issue state" schema:"enum=open|closed|all,default=open"`
	Count   int      `json:"count" jsonschema:"How many" schema:"minimum=1,maximum=50,example=7"`
	Since   *string  `json:"since,omitempty" jsonschema:"ISO 8601 time" schema:"format=date-time"`
	Name    *string  `json:"name,omitempty" jsonschema:"Emoji name" schema:"minLength=1,maxLength=100,pattern=^[a-z0-9_+-]+(,x)?$"`
	Tags    []string `json:"tags,omitempty" jsonschema:"Labels" schema:"maxItems=10,example=bug|ui"`
	Nested  *struct {
		Flag *bool `json:"flag,omitempty" jsonschema:"A flag" schema:"default=true"`
	} `json:"nested,omitempty" jsonschema:"Nested options"`
}

func TestReflectAppliesTags(t *testing.T) {
	t.Parallel()
	s, err := Reflect[schemaProbe]()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(s)
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	tests := []struct {
		name  string
		field string
		want  map[string]any
	}{
		{name: "embedded page cursor flattened", field: "cursor", want: map[string]any{"type": "string", "description": "The previous page's next_cursor, with the other arguments unchanged; omit for the first page", "examples": []any{"eyJwIjoyfQ"}}},
		{name: "embedded page limit bounds", field: "limit", want: map[string]any{"type": "integer", "description": "Items per page", "minimum": 1.0, "maximum": 100.0, "default": 30.0}},
		{name: "enum and default; pointer is not nullable", field: "state", want: map[string]any{"type": "string", "description": "Issue state", "enum": []any{"open", "closed", "all"}, "default": "open"}},
		{name: "minimum and maximum", field: "count", want: map[string]any{"type": "integer", "description": "How many", "minimum": 1.0, "maximum": 50.0, "examples": []any{7.0}}},
		{name: "format", field: "since", want: map[string]any{"type": "string", "description": "ISO 8601 time", "format": "date-time"}},
		{name: "pattern keeps commas", field: "name", want: map[string]any{"type": "string", "description": "Emoji name", "minLength": 1.0, "maxLength": 100.0, "pattern": "^[a-z0-9_+-]+(,x)?$"}},
		{name: "array bounds", field: "tags", want: map[string]any{"type": "array", "description": "Labels", "items": map[string]any{"type": "string"}, "maxItems": 10.0, "examples": []any{[]any{"bug", "ui"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, props[tt.field]); diff != "" {
				t.Errorf("%s schema (-want +got):\n%s", tt.field, diff)
			}
		})
	}
	nested := props["nested"].(map[string]any)["properties"].(map[string]any)["flag"]
	if diff := cmp.Diff(map[string]any{"type": "boolean", "description": "A flag", "default": true}, nested); diff != "" {
		t.Errorf("nested flag (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"channel", "count"}, got["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	if got["additionalProperties"] != false {
		t.Errorf("additionalProperties = %v, want false", got["additionalProperties"])
	}
}

func TestReflectRefusesBadTags(t *testing.T) {
	t.Parallel()
	type noDescription struct {
		A string `json:"a"`
	}
	type unknownKey struct {
		A string `json:"a" jsonschema:"A" schema:"bogus=1"`
	}
	type badNumber struct {
		A int `json:"a" jsonschema:"A" schema:"minimum=one"`
	}
	type badExample struct {
		A int `json:"a" jsonschema:"A" schema:"example=seven"`
	}
	type badEnumValue struct {
		A int `json:"a" jsonschema:"A" schema:"enum=1|two"`
	}
	for name, reflect := range map[string]func() error{
		"field without description": func() error { _, err := Reflect[noDescription](); return err },
		"unknown schema key":        func() error { _, err := Reflect[unknownKey](); return err },
		"minimum not a number":      func() error { _, err := Reflect[badNumber](); return err },
		"enum value of wrong type":  func() error { _, err := Reflect[badEnumValue](); return err },
		"example of wrong type":     func() error { _, err := Reflect[badExample](); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if err := reflect(); err == nil {
				t.Error("Reflect succeeded, want an error")
			}
		})
	}
}
