package schemacheck

import (
	"encoding/json"
	"strings"
	"testing"
)

// strictOK is a schema every checker takes: closed objects, every property
// required, an optional one nullable by anyOf, a date-time, a string enum.
const strictOK = `{"type":"object","additionalProperties":false,"required":["a","b","c"],"properties":{` +
	`"a":{"type":"string","description":"A","format":"date-time"},` +
	`"b":{"anyOf":[{"type":"object","additionalProperties":false,"required":["x"],"properties":{"x":{"type":"string","enum":["p","q"]}}},{"type":"null"}]},` +
	`"c":{"type":"array","items":{"type":"integer"}}}}`

// TestCheckersTakeTheSubset: a schema in the common subset breaks no vendor's rules.
func TestCheckersTakeTheSubset(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]Checker{"openai": OpenAIStrict, "anthropic": Anthropic, "gemini-json": GeminiJSONSchema} {
		if v := c(json.RawMessage(strictOK)); len(v) > 0 {
			t.Errorf("%s refuses the common subset: %v", name, v)
		}
	}
	gemini := strings.ReplaceAll(strictOK, `"additionalProperties":false,`, "")
	if v := GeminiParameters(json.RawMessage(gemini)); len(v) > 0 {
		t.Errorf("Gemini's parameters refuse the subset without additionalProperties: %v", v)
	}
}

// TestCheckersRefuseWhatVendorsDocument: each checker names each documented rule a
// schema breaks.
func TestCheckersRefuseWhatVendorsDocument(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		check  Checker
		schema string
		rule   string // a part of the violation's text
	}{
		{"openai optional", OpenAIStrict, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`, "missing a"},
		{"openai open object", OpenAIStrict, `{"type":"object","properties":{}}`, "additionalProperties: false"},
		{"openai minLength", OpenAIStrict, `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string","minLength":1}}}`, "keyword minLength"},
		{"openai default", OpenAIStrict, `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string","default":"x"}}}`, "keyword default"},
		{"openai oneOf", OpenAIStrict, `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"oneOf":[{"type":"string"}]}}}`, "keyword oneOf"},
		{"openai format", OpenAIStrict, `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string","format":"uri"}}}`, "format uri"},
		{"openai root anyOf", OpenAIStrict, `{"anyOf":[{"type":"object"}]}`, "the root must be type object"},
		{"openai nesting", OpenAIStrict, nested(11), "10 levels"},
		{"anthropic recursion", Anthropic, `{"type":"object","additionalProperties":false,"$defs":{"n":{"type":"object","additionalProperties":false,"properties":{"c":{"$ref":"#/$defs/n"}}}},"properties":{"n":{"$ref":"#/$defs/n"}}}`, "recursive"},
		{"anthropic maximum", Anthropic, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","maximum":3}}}`, "keyword maximum"},
		{"anthropic minItems", Anthropic, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"array","minItems":2}}}`, "minItems"},
		{"anthropic examples", Anthropic, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","examples":["x"]}}}`, "keyword examples"},
		{"gemini additionalProperties", GeminiParameters, `{"type":"object","additionalProperties":false}`, "additionalProperties"},
		{"gemini type list", GeminiParameters, `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, "one type"},
		{"gemini number enum", GeminiParameters, `{"type":"object","properties":{"a":{"type":"integer","enum":[1,2]}}}`, "enum values must be strings"},
		{"gemini format", GeminiParameters, `{"type":"object","properties":{"a":{"type":"string","format":"unix-time"}}}`, "format unix-time"},
		{"gemini name", GeminiParameters, `{"type":"object","properties":{"a[b]":{"type":"string"}}}`, "parameter name"},
		{"gemini json const", GeminiJSONSchema, `{"type":"object","properties":{"a":{"const":"x"}}}`, "keyword const"},
	} {
		v := c.check(json.RawMessage(c.schema))
		found := false
		for _, x := range v {
			found = found || strings.Contains(x.String(), c.rule)
		}
		if !found {
			t.Errorf("%s: want a violation saying %q, got %v", c.name, c.rule, v)
		}
	}
}

// nested is a closed object n levels deep.
func nested(n int) string {
	s := `{"type":"string"}`
	for range n {
		s = `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":` + s + `}}`
	}
	return s
}
