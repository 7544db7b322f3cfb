package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
)

func allTools(tb testing.TB) []*providers.Tool {
	tb.Helper()
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		tb.Fatal(err)
	}
	var tools []*providers.Tool
	for _, p := range reg.Providers() {
		tools = append(tools, reg.Tools(p.Name)...)
	}
	if len(tools) < 100 {
		tb.Fatalf("%d tools registered, want the built-in providers' 100 or more", len(tools))
	}
	return tools
}

func tool(tb testing.TB, name string) *providers.Tool {
	tb.Helper()
	for _, t := range allTools(tb) {
		if t.Name == name {
			return t
		}
	}
	tb.Fatalf("no tool %s", name)
	return nil
}

// TestFastValidationTakesTypicalCalls: the arguments of a typical call are found
// valid without the full JSON Schema validator, and everything else is left to it.
func TestFastValidationTakesTypicalCalls(t *testing.T) {
	issue := tool(t, "github_get_issue").ArgsValidator()
	post := tool(t, "slack_post_message").ArgsValidator()
	for _, c := range []struct {
		name string
		v    *providers.Validator
		args string
		fast bool // the fast path finds it valid; otherwise the full validator decides
	}{
		{"typical", issue, `{"owner":"octocat","repo":"Hello-World","issue_number":1347}`, true},
		{"spaced, other order", issue, " {\n\t\"issue_number\" : 1, \"repo\":\"r\",\"owner\":\"é\"} ", true},
		{"slack", post, `{"channel":"C024BE91L","text":"Hello"}`, true},
		{"missing", issue, `{"owner":"octocat","repo":"Hello-World"}`, false},
		{"unknown member", issue, `{"owner":"o","repo":"r","issue_number":1,"x":1}`, false},
		{"below minimum", issue, `{"owner":"o","repo":"r","issue_number":0}`, false},
		{"too short", issue, `{"owner":"","repo":"r","issue_number":1}`, false},
		{"a fraction", issue, `{"owner":"o","repo":"r","issue_number":1.0}`, false},
		{"an exponent", issue, `{"owner":"o","repo":"r","issue_number":1e3}`, false},
		{"an escape", issue, `{"owner":"o\u0041","repo":"r","issue_number":1}`, false},
		{"a leading zero", issue, `{"owner":"o","repo":"r","issue_number":01}`, false},
		{"named twice", issue, `{"owner":"o","owner":"p","repo":"r","issue_number":1}`, false},
		{"after the object", issue, `{"owner":"o","repo":"r","issue_number":1} {}`, false},
		{"wrong type", issue, `{"owner":1,"repo":"r","issue_number":1}`, false},
		{"not an object", issue, `[]`, false},
		{"invalid UTF-8", issue, "{\"owner\":\"\xff\",\"repo\":\"r\",\"issue_number\":1}", false},
	} {
		has, valid := c.v.FastValid([]byte(c.args))
		if !has {
			t.Fatalf("%s: the schema has no fast path", c.name)
		}
		if valid != c.fast {
			t.Errorf("%s: the fast path says valid=%v for %s, want %v", c.name, valid, c.args, c.fast)
		}
		// Either way, Validate answers as the full validator does.
		if got, want := c.v.Validate(json.RawMessage(c.args)), c.v.FullValidate(json.RawMessage(c.args)); (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("%s: Validate = %v, the full validator says %v", c.name, got, want)
		}
	}
	fast := 0
	tools := allTools(t)
	for _, tl := range tools {
		if has, _ := tl.ArgsValidator().FastValid([]byte(`{}`)); has {
			fast++
		}
	}
	if fast < len(tools)/2 {
		t.Errorf("%d of %d tools' schemas have a fast path, want most", fast, len(tools))
	}
	t.Logf("%d of %d tools' schemas have a fast path", fast, len(tools))
}

// TestFastValidationLeavesEveryBrokenRule: a value that breaks any rule the fast path
// reads is left to the full validator, which says what is wrong.
func TestFastValidationLeavesEveryBrokenRule(t *testing.T) {
	v, err := providers.NewValidator(json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name"],"properties":{
		"name":{"type":"string","minLength":2,"maxLength":4,"description":"d","examples":["ab"]},
		"state":{"type":"string","enum":["open","closed"],"default":"open"},
		"sha":{"type":"string","pattern":"^[0-9a-f]+$"},
		"limit":{"type":"integer","minimum":1,"maximum":100},
		"ratio":{"type":"number","minimum":0,"maximum":10},
		"draft":{"type":"boolean"},
		"when":{"type":"string","format":"date-time"},
		"tags":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args string
		fast bool
	}{
		{`{"name":"ab","state":"closed","sha":"0af","limit":100,"ratio":0,"draft":true}`, true},
		{`{"name":"abcd","limit":1,"ratio":10,"draft":false}`, true},
		{`{"name":"a"}`, false},
		{`{"name":"abcde"}`, false},
		{`{"name":"ab","state":"merged"}`, false},
		{`{"name":"ab","sha":"xyz"}`, false},
		{`{"name":"ab","limit":0}`, false},
		{`{"name":"ab","limit":101}`, false},
		{`{"name":"ab","ratio":11}`, false},
		{`{"name":"ab","ratio":0.5}`, false},
		{`{"name":"ab","draft":"yes"}`, false},
		{`{"name":"ab","draft":null}`, false},
		{`{"name":"ab","when":"2026-01-01T00:00:00Z"}`, false},
		{`{"name":"ab","tags":["x"]}`, false},
		{`{"state":"open"}`, false},
	} {
		has, valid := v.FastValid([]byte(c.args))
		if !has || valid != c.fast {
			t.Errorf("the fast path says (%v, %v) for %s, want (true, %v)", has, valid, c.args, c.fast)
		}
		if got, want := v.Validate(json.RawMessage(c.args)), v.FullValidate(json.RawMessage(c.args)); (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("%s: Validate = %v, the full validator says %v", c.args, got, want)
		}
	}
	// A keyword it does not read leaves the whole schema to the full validator.
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[{"required":["a"]}]}`,
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"a":{"type":"integer","minimum":0.5}}}`,
		`{"properties":{"a":{"type":"string"}}}`,
	} {
		v, err := providers.NewValidator(json.RawMessage(schema))
		if err != nil {
			t.Fatal(err)
		}
		if has, _ := v.FastValid([]byte(`{"a":"x"}`)); has {
			t.Errorf("%s has a fast path; it uses what the fast path does not read", schema)
		}
	}
}

// FuzzFastValidation: whatever the fast path finds valid, the full JSON Schema
// validator finds valid too, for every built-in tool's schema.
func FuzzFastValidation(f *testing.F) {
	tools := allTools(f)
	for _, s := range []string{
		`{"owner":"octocat","repo":"Hello-World","issue_number":1347}`, `{"channel":"C1","text":"hi"}`,
		`{"owner":"o","repo":"r","title":"t","labels":["bug"]}`, `{"query":"is:open","limit":5,"state":"open"}`,
		`{"page_size":100,"cursor":"abc","archived":false}`, `{"owner":"o","repo":"r","issue_number":-1}`,
		`{"limit":999999999999999}`, `{}`, `{"a":null}`, `{"email":"a@b.c","name":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, tl := range tools {
			v := tl.ArgsValidator()
			if _, valid := v.FastValid(args); valid {
				if err := v.FullValidate(json.RawMessage(args)); err != nil {
					t.Fatalf("%s: the fast path took %q, which the full validator refuses: %v", tl.Name, args, err)
				}
			}
		}
	})
}
