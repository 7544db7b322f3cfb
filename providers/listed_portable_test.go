package providers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// awkward is an input with each thing the portable listing changes: keywords vendors
// refuse, optional properties, a type list, oneOf, a nullable enum, a number enum, a
// free-form map, a value of any type, allOf, a recursive reference, formats, and a
// description longer than 1,024 characters.
var awkward = `{"type":"object","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#/$defs/node"}},"required":["name"]}},` +
	`"properties":{` +
	`"title":{"type":"string","minLength":1,"maxLength":80,"pattern":"^[a-z]+$","examples":["abc"],"default":"x","description":"` + strings.Repeat("d", 1100) + `"},` +
	`"count":{"type":["integer","null"],"minimum":1,"maximum":9},` +
	`"when":{"type":"string","format":"date-time"},` +
	`"site":{"type":"string","format":"uri"},` +
	`"target":{"oneOf":[{"type":"string"},{"type":"integer"}]},` +
	`"state":{"type":"string","enum":["open","closed",null]},` +
	`"size":{"type":"integer","enum":[1,2,3]},` +
	`"fields":{"type":"object","additionalProperties":{"type":"string"},"description":"Cells by column"},` +
	`"value":{"description":"Anything"},` +
	`"owner":{"allOf":[{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},{"properties":{"team":{"type":"string"}}}]},` +
	`"tree":{"$ref":"#/$defs/node"}` +
	`},"required":["title","fields"],"additionalProperties":false}`

func TestPortableInputTakesTheVendorsSubset(t *testing.T) {
	t.Parallel()
	got, err := PortableInput(json.RawMessage(awkward))
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Repeat("d", MaxDescription-1) + "…"
	want := `{"additionalProperties":false,"properties":{` +
		`"count":{"type":["integer","null"]},` +
		`"fields":{"description":"Cells by column (JSON text of an object)","type":"string"},` +
		`"owner":{"anyOf":[{"additionalProperties":false,"properties":{"id":{"type":"string"},"team":{"type":["string","null"]}},"required":["id","team"],"type":"object"},{"type":"null"}]},` +
		`"site":{"type":["string","null"]},` +
		`"size":{"description":"One of: 1, 2, 3.","type":["integer","null"]},` +
		`"state":{"anyOf":[{"enum":["open","closed"],"type":"string"},{"type":"null"}]},` +
		`"target":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]},` +
		`"title":{"description":"` + cut + `","type":"string"},` +
		`"tree":{"anyOf":[{"additionalProperties":false,"properties":{"child":{"description":"JSON text of the value.","type":["string","null"]},"name":{"type":"string"}},"required":["child","name"],"type":"object"},{"type":"null"}]},` +
		`"value":{"description":"Anything (JSON text of the value)","type":["string","null"]},` +
		`"when":{"format":"date-time","type":["string","null"]}},` +
		`"required":["count","fields","owner","site","size","state","target","title","tree","value","when"],"type":"object"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("PortableInput (-want +got):\n%s", diff)
	}
	gem, err := GeminiInput(json.RawMessage(awkward))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"additionalProperties"`, `"type":[`, `{"type":"null"}`} {
		if strings.Contains(string(gem), s) {
			t.Errorf("GeminiInput keeps %s, which Gemini's parameters refuse: %s", s, gem)
		}
	}
	if !strings.Contains(string(gem), `"count":{"nullable":true,"type":"integer"}`) {
		t.Errorf("GeminiInput says an optional property's null otherwise than nullable: true: %s", gem)
	}
}

// TestArgsFromTurnsArgumentsBack: arguments written for the portable listing (every
// property given, null for those left out, JSON text for free-form values) come back
// as the full schema's arguments, which it accepts; a required property's null and a
// string that is not JSON text of the kind asked stay as they are, and under the full
// profile nothing is touched.
func TestArgsFromTurnsArgumentsBack(t *testing.T) {
	t.Parallel()
	tool, err := NewConnectionTool(&Spec{Name: "x"}, "x_awkward", echoOp("awkward", Hints{}), json.RawMessage(awkward), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := NewValidator(func() json.RawMessage { in, _ := tool.ListedFor(ProfilePortable); return in }())
	if err != nil {
		t.Fatal(err)
	}
	args := `{"count":null,"fields":"{\"Name\":\"Ada\",\"Age\":\"36\"}","owner":{"id":"u1","team":null},"site":null,"size":2,"state":null,` +
		`"target":7,"title":"abc","tree":{"name":"root","child":"{\"name\":\"leaf\"}"},"value":"[1,2]","when":"2026-01-02T03:04:05Z"}`
	if err := listed.Validate(json.RawMessage(args)); err != nil {
		t.Fatalf("the listed schema refuses %s: %v", args, err)
	}
	got, err := tool.ArgsFrom(ProfilePortable, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"fields":{"Age":"36","Name":"Ada"},"owner":{"id":"u1"},"size":2,"target":7,"title":"abc","tree":{"child":{"name":"leaf"},"name":"root"},"value":[1,2],"when":"2026-01-02T03:04:05Z"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("ArgsFrom (-want +got):\n%s", diff)
	}
	if err := tool.Validate(got); err != nil {
		t.Errorf("the full schema refuses the arguments turned back: %v", err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"title":"abc","fields":null}`, `{"fields":null,"title":"abc"}`},           // required: null stays, for validation to refuse
		{`{"title":"abc","fields":"[1]"}`, `{"fields":"[1]","title":"abc"}`},         // not an object's JSON text
		{`{"title":"abc","fields":{"a":"b"}}`, `{"fields":{"a":"b"},"title":"abc"}`}, // an object already
	} {
		got, err := tool.ArgsFrom(ProfilePortable, json.RawMessage(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("ArgsFrom(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	if got, _ := tool.ArgsFrom(ProfileFull, json.RawMessage(args)); string(got) != args {
		t.Errorf("ArgsFrom under full changed the arguments: %s", got)
	}
}

// TestListedForIsMadeOnce: a tool's listing under a profile is made on first use and
// the same bytes are served after, never made again per list or call.
func TestListedForIsMadeOnce(t *testing.T) {
	t.Parallel()
	tool, err := NewConnectionTool(&Spec{Name: "x"}, "x_awkward", echoOp("awkward", Hints{}), json.RawMessage(awkward), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []SchemaProfile{ProfilePortable, ProfileGemini} {
		a, _ := tool.ListedFor(p)
		b, _ := tool.ListedFor(p)
		if &a[0] != &b[0] {
			t.Errorf("%s: the listing was made again", p)
		}
	}
	full, _ := tool.ListedFor(ProfileFull)
	if lean, _ := tool.Listed(); string(full) != string(lean) {
		t.Errorf("ListedFor(full) = %s, want Listed's %s", full, lean)
	}
}

// BenchmarkArgsFrom is the per-call cost of turning a portable call's arguments back
// (every optional property given as null, a map as JSON text), and of a call that
// gives none (nothing to turn: the arguments are returned as they came).
func BenchmarkArgsFrom(b *testing.B) {
	tool, err := NewConnectionTool(&Spec{Name: "x"}, "x_awkward", echoOp("awkward", Hints{}), json.RawMessage(awkward), nil)
	if err != nil {
		b.Fatal(err)
	}
	tool.ListedFor(ProfilePortable)
	for name, args := range map[string]string{
		"turned":    `{"count":null,"fields":"{\"Name\":\"Ada\"}","owner":null,"site":null,"size":null,"state":null,"target":null,"title":"abc","tree":null,"value":null,"when":null}`,
		"untouched": `{"title":"abc","fields":{"Name":"Ada"}}`,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tool.ArgsFrom(ProfilePortable, json.RawMessage(args)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestGeminiNamesParameters: the gemini profile lists a parameter whose name Gemini
// refuses (a header's X-Amz-Date, a dotted search.field) under one it takes, and
// turns a call's arguments back to the real names.
func TestGeminiNamesParameters(t *testing.T) {
	t.Parallel()
	in := `{"type":"object","properties":{"X-Amz-Date":{"type":"string"},"search.field":{"type":"string"},"search_field":{"type":"integer"}},"required":["search.field"]}`
	tool, err := NewConnectionTool(&Spec{Name: "x"}, "x_names", echoOp("names", Hints{}), json.RawMessage(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := tool.ListedFor(ProfileGemini)
	want := `{"properties":{"X_Amz_Date":{"nullable":true,"type":"string"},"search_field":{"nullable":true,"type":"integer"},"search_field_2":{"type":"string"}},"required":["X_Amz_Date","search_field","search_field_2"],"type":"object"}`
	if diff := cmp.Diff(want, string(listed)); diff != "" {
		t.Errorf("GeminiInput (-want +got):\n%s", diff)
	}
	got, err := tool.ArgsFrom(ProfileGemini, json.RawMessage(`{"X_Amz_Date":"20260102T030405Z","search_field":null,"search_field_2":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"X-Amz-Date":"20260102T030405Z","search.field":"x"}`; string(got) != want {
		t.Errorf("ArgsFrom = %s, want %s", got, want)
	}
	if portable, _ := tool.ListedFor(ProfilePortable); !strings.Contains(string(portable), `"X-Amz-Date"`) {
		t.Errorf("the portable profile renamed a parameter OpenAI and Anthropic take: %s", portable)
	}
}
