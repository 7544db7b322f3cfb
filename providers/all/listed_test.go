package all_test

import (
	"encoding/json"
	"fmt"
	"slices"
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
// ListedOutput) are smaller than the full ones, yet every schema in them, at every
// depth, keeps the properties and constraints of the full one (types, required
// fields, enums, patterns, bounds), and every input schema also keeps its
// descriptions, defaults and additionalProperties: a model calls with them and a
// client validates structuredContent with them. A cut that dropped one fails here.
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
			sameEssentials(t, tool.Name+" input", decode(t, tool.InputSchema), decode(t, input), append(slices.Clone(constraintKeys), inputOnlyKeys...))
			sameEssentials(t, tool.Name+" output", decode(t, tool.OutputSchema), decode(t, output), constraintKeys)
			if _, err := providers.NewValidator(output); err != nil {
				t.Errorf("%s: the listed output schema does not compile: %v", tool.Name, err)
			}
		}
	}
}

// TestListedSchemasDropTheProse pins what the cuts remove, on a schema that has each.
func TestListedSchemasDropTheProse(t *testing.T) {
	t.Parallel()
	in := `{"type":"object","title":"In","properties":{` +
		`"owner":{"type":"string","description":"Owner, e.g. octocat","examples":["octocat"]},` +
		`"labels":{"type":"array","items":{"type":"string"},"description":"Labels, e.g. bug or ui","examples":[["bug","ui"]]},` +
		`"q":{"type":"string","description":"Query","examples":["is:open"]}},"additionalProperties":false}`
	gotIn, err := providers.ListedInput(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	wantIn := `{"additionalProperties":false,"properties":{` +
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
	wantOut := `{"properties":{` +
		`"items":{"items":{"properties":{"s":{"enum":["a","b"],"type":"string"}},"required":["s"],"type":"object"},"type":"array"},` +
		`"m":{"additionalProperties":{"type":"string"},"type":"object"},` +
		`"n":{"minimum":1,"type":"integer"}},"required":["n"],"type":"object"}`
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
