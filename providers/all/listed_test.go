package all_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
)

// What a client or a model must still read in a listed schema: everything that
// constrains a value. For inputs the model also needs the descriptions and defaults.
var (
	constraintKeys = []string{"type", "required", "enum", "const", "pattern", "format", "minimum", "maximum",
		"exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems"}
	inputOnlyKeys = []string{"description", "default", "additionalProperties"}
)

// TestListedSchemasKeepWhatCallersNeed: the schemas tools/list serves (ListedInput,
// ListedOutput) are smaller than the full ones, yet keep what callers need.
//
// An input schema, which a model builds its call from and a client may validate it
// with, keeps at every depth the properties and constraints of the full one (types,
// required fields, enums, patterns, bounds) and its descriptions, defaults and
// additionalProperties, once its references to the subschemas it says once ($defs)
// are followed. The only bound it may leave out is a maxLength of providers.LongText
// or more, which no argument a model writes comes near.
//
// An output schema is what a client validates structuredContent with: the listed one
// must accept everything the full one accepts (looser, never stricter: each constraint
// it keeps, at any depth, is the full schema's own), so every answer the hub sends
// validates against it, and it keeps the result's contract: the root's type and the
// fields the result always carries (required). A cut that dropped one fails here.
func TestListedSchemasKeepWhatCallersNeed(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := all.Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	for _, p := range r.Providers() {
		for _, tool := range r.Tools(p.Name) {
			input, output := tool.Listed()
			if len(input) >= len(tool.InputSchema) && len(output) >= len(tool.OutputSchema) {
				t.Errorf("%s: the listed schemas (%d + %d bytes) are not smaller than the full ones (%d + %d)",
					tool.Name, len(input), len(output), len(tool.InputSchema), len(tool.OutputSchema))
			}
			sameEssentials(t, tool.Name+" input", decode(t, tool.InputSchema), inlineRefs(t, decode(t, input)), append(slices.Clone(constraintKeys), inputOnlyKeys...))
			fullOut, listedOut := decode(t, tool.OutputSchema), decode(t, output)
			loosens(t, tool.Name+" output", fullOut, listedOut)
			sameContract(t, tool.Name+" output", fullOut, listedOut)
			if _, err := providers.NewValidator(output); err != nil {
				t.Errorf("%s: the listed output schema does not compile: %v", tool.Name, err)
			}
		}
	}
}

// TestLoosensCatchesAStricterSchema: loosens, the output half of the check above,
// refuses a listed schema that would reject what the full one accepts.
func TestLoosensCatchesAStricterSchema(t *testing.T) {
	t.Parallel()
	full := `{"type":"object","properties":{"n":{"type":"integer","minimum":1},` +
		`"items":{"type":"array","items":{"type":"object","properties":{"s":{"type":"string"}},"additionalProperties":false}}},"required":["n"]}`
	for name, listed := range map[string]string{
		"a bound changed":     `{"type":"object","properties":{"n":{"type":"integer","minimum":2}},"required":["n"]}`,
		"a bound added":       `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9}},"required":["n"]}`,
		"a field required":    `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n","items"]}`,
		"a field invented":    `{"type":"object","properties":{"z":{"type":"string"}}}`,
		"fields closed":       `{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`,
		"nested fields close": `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","additionalProperties":false}}}}`,
	} {
		rec := &recorder{}
		loosens(rec, name, decode(t, json.RawMessage(full)), decode(t, json.RawMessage(listed)))
		if rec.errors == 0 {
			t.Errorf("%s: loosens accepted %s as a loosening of %s", name, listed, full)
		}
	}
	rec := &recorder{}
	loosens(rec, "top level", decode(t, json.RawMessage(full)),
		decode(t, json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1},"items":{"type":"array","items":{"type":"object"}}},"required":["n"]}`)))
	if rec.errors != 0 {
		t.Errorf("loosens refused the top level of the full schema: %v", rec.msgs)
	}
}

// recorder is the part of testing.T that loosens reports to, so a test can see it fail.
type recorder struct {
	errors int
	msgs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors++
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// reporter is what loosens needs of a *testing.T.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// loosens checks that listed accepts whatever full accepts: every keyword listed keeps,
// at any depth, has full's own value, except the subschemas (properties, items,
// additionalProperties), which must loosen full's in turn; a listed property full does
// not have, or listed properties closed by additionalProperties without all of full's,
// would refuse what full allows.
func loosens(t reporter, where string, full, listed map[string]any) {
	t.Helper()
	for k, lv := range listed {
		fv, ok := full[k]
		if !ok {
			t.Errorf("%s: the listed schema adds %s: %v, which the full one does not have", where, k, lv)
			continue
		}
		ls, lsub := lv.(map[string]any)
		fs, fsub := fv.(map[string]any)
		switch {
		case k == "properties" && lsub && fsub:
			for name, p := range ls {
				lp, _ := p.(map[string]any)
				fp, ok := fs[name].(map[string]any)
				if !ok {
					t.Errorf("%s: property %s is listed but not in the full schema", where, name)
					continue
				}
				loosens(t, where+"."+name, fp, lp)
			}
		case (k == "items" || k == "additionalProperties") && lsub && fsub:
			loosens(t, where+"."+k, fs, ls)
		case !cmp.Equal(fv, lv):
			t.Errorf("%s: %s is %v in the full schema, %v listed", where, k, fv, lv)
		}
	}
	if _, closed := listed["additionalProperties"]; closed {
		fp, _ := full["properties"].(map[string]any)
		lp, _ := listed["properties"].(map[string]any)
		if len(lp) != len(fp) {
			t.Errorf("%s: additionalProperties is listed without all of the full schema's properties", where)
		}
	}
}

// sameContract checks that a listed output schema keeps the result's contract: the
// root's type and its required fields.
func sameContract(t *testing.T, where string, full, listed map[string]any) {
	t.Helper()
	for _, k := range []string{"type", "required"} {
		if !cmp.Equal(full[k], listed[k]) {
			t.Errorf("%s: %s is %v in the full schema, %v listed", where, k, full[k], listed[k])
		}
	}
}

// TestListedSchemasDropTheProse pins what the cuts remove, on a schema that has each.
func TestListedSchemasDropTheProse(t *testing.T) {
	t.Parallel()
	in := `{"type":"object","title":"In","properties":{` +
		`"cursor":{"type":"string","description":"The previous page's next_cursor","examples":["eyJwIjoyfQ"]},` +
		`"owner":{"type":"string","description":"Owner, e.g. octocat","examples":["octocat"]},` +
		`"labels":{"type":"array","items":{"type":"string"},"description":"Labels, e.g. bug or ui","examples":[["bug","ui"]]},` +
		`"q":{"type":"string","description":"Query","examples":["is:open"]}},"additionalProperties":false}`
	gotIn, err := providers.ListedInput(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	wantIn := `{"additionalProperties":false,"properties":{` +
		`"cursor":{"description":"The previous page's next_cursor","type":"string"},` +
		`"labels":{"description":"Labels, e.g. bug or ui","items":{"type":"string"},"type":"array"},` +
		`"owner":{"description":"Owner, e.g. octocat","type":"string"},` +
		`"q":{"description":"Query","examples":["is:open"],"type":"string"}},"type":"object"}`
	if diff := cmp.Diff(wantIn, string(gotIn)); diff != "" {
		t.Errorf("ListedInput (-want +got):\n%s", diff)
	}
	out := `{"type":"object","description":"Out","properties":{` +
		`"n":{"type":"integer","description":"Number","examples":[3],"default":1,"minimum":1},` +
		`"m":{"type":"object","title":"M","additionalProperties":{"type":"string","description":"Value"}},` +
		`"items":{"type":"array","items":{"type":"object","properties":{"s":{"type":"string","enum":["a","b"],"description":"S"}},"required":["s"],"additionalProperties":false}}},` +
		`"required":["n"],"additionalProperties":false}`
	gotOut, err := providers.ListedOutput(json.RawMessage(out))
	if err != nil {
		t.Fatal(err)
	}
	wantOut := `{"type":"object","required":["n"]}`
	if diff := cmp.Diff(wantOut, string(gotOut)); diff != "" {
		t.Errorf("ListedOutput (-want +got):\n%s", diff)
	}
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	return s
}

// sameEssentials compares full and listed at every depth: the same keys among keys,
// the same properties, items and additionalProperties schemas.
func sameEssentials(t *testing.T, where string, full, listed map[string]any, keys []string) {
	t.Helper()
	for _, k := range keys {
		fv, fok := full[k]
		lv, lok := listed[k]
		if n, ok := fv.(float64); ok && k == "maxLength" && !lok && n >= providers.LongText {
			continue // a document's length: left out of the listing
		}
		if k == "additionalProperties" {
			if _, isSchema := fv.(map[string]any); isSchema {
				continue // compared below, as a schema
			}
		}
		if fok != lok || !cmp.Equal(fv, lv) {
			t.Errorf("%s: %s is %v in the full schema, %v listed", where, k, show(fv, fok), show(lv, lok))
		}
	}
	fp, _ := full["properties"].(map[string]any)
	lp, _ := listed["properties"].(map[string]any)
	if diff := cmp.Diff(slices.Sorted(keysOf(fp)), slices.Sorted(keysOf(lp))); diff != "" {
		t.Errorf("%s: properties (-full +listed):\n%s", where, diff)
	}
	for name, f := range fp {
		fs, _ := f.(map[string]any)
		ls, _ := lp[name].(map[string]any)
		if fs != nil && ls != nil {
			sameEssentials(t, where+"."+name, fs, ls, keys)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		fs, fok := full[k].(map[string]any)
		ls, lok := listed[k].(map[string]any)
		if fok != lok {
			t.Errorf("%s: %s schema present in full %v, listed %v", where, k, fok, lok)
		}
		if fok && lok {
			sameEssentials(t, where+"."+k, fs, ls, keys)
		}
	}
}

// inlineRefs returns a listed input schema with each reference to its $defs replaced
// by the subschema it names, as a validator reads it.
func inlineRefs(t *testing.T, s map[string]any) map[string]any {
	t.Helper()
	defs, _ := s["$defs"].(map[string]any)
	delete(s, "$defs")
	var inline func(v any) any
	inline = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				def, ok := defs[strings.TrimPrefix(ref, "#/$defs/")]
				if !ok || len(x) != 1 {
					t.Errorf("listed schema refers to %s beside %v; its $defs hold %v", ref, x, slices.Sorted(keysOf(defs)))
					return x
				}
				return inline(def)
			}
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = inline(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = inline(e)
			}
			return out
		}
		return v
	}
	return inline(s).(map[string]any)
}

func keysOf(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func show(v any, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprint(v)
}
