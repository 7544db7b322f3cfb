package providers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// categories is a large enum an input repeats, as Stripe's merchant categories are.
var categories = func() string {
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("%q", fmt.Sprintf("category_%02d", i)))
	}
	return `{"items":{"enum":[` + strings.Join(names, ",") + `],"type":"string"},"type":"array"}`
}()

// boilerplate is an input with each thing ListedInput leaves out or says once.
var boilerplate = `{"type":"object","properties":{` +
	`"body":{"type":"object","additionalProperties":false,"properties":{` +
	`"id":{"type":"string","maxLength":5000,"x-stripeBypassValidation":true},` +
	`"nothing":{"type":"object","additionalProperties":false},` +
	`"name":{"type":"string","maxLength":500,"title":"name"},` +
	`"address":{"anyOf":[{"type":"object","properties":{"city":{"type":"string","maxLength":5000}}},{"type":"string","enum":[""]}]},` +
	`"flag":{"type":"boolean","enum":[true]},` +
	`"amount":{"type":"integer","enum":[5]},` +
	`"controls":{"type":"object","properties":{` +
	`"allowed_categories":` + categories + `,"blocked_categories":` + categories + `,` +
	`"limits":{"type":"array","items":{"type":"object","properties":{"categories":` + categories + `,"amount":{"type":"integer"}},"required":["amount"]}}}}}},` +
	`"empty":{"type":"object","additionalProperties":false,"description":"No body"},` +
	`"needed":{"type":"object","additionalProperties":false}` +
	`},"required":["needed"],"x-extra":"vendor"}`

// TestListedInputSaysItOnce pins what ListedInput leaves out of an input and what it
// says once: vendor extensions and titles, a maxLength of a document's length (a name's
// 500 stays), the type beside a one-value enum when the value says it (a string or a
// boolean, not a number), an optional property that admits only the empty object (kept
// when required, or when its object refuses unknown properties), and a subschema
// repeated three times, said once under $defs by the words its names share.
func TestListedInputSaysItOnce(t *testing.T) {
	t.Parallel()
	got, err := ListedInput(json.RawMessage(boilerplate))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"$defs":{"categories":` + categories + `},"properties":{` +
		`"body":{"additionalProperties":false,"properties":{` +
		`"address":{"anyOf":[{"properties":{"city":{"type":"string"}},"type":"object"},{"enum":[""]}]},` +
		`"amount":{"enum":[5],"type":"integer"},` +
		`"controls":{"properties":{"allowed_categories":{"$ref":"#/$defs/categories"},"blocked_categories":{"$ref":"#/$defs/categories"},` +
		`"limits":{"items":{"properties":{"amount":{"type":"integer"},"categories":{"$ref":"#/$defs/categories"}},"required":["amount"],"type":"object"},"type":"array"}},"type":"object"},` +
		`"flag":{"enum":[true]},` +
		`"id":{"type":"string"},` +
		`"name":{"maxLength":500,"type":"string"},` +
		`"nothing":{"additionalProperties":false,"type":"object"}},"type":"object"},` +
		`"needed":{"additionalProperties":false,"type":"object"}},` +
		`"required":["needed"],"type":"object"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("ListedInput (-want +got):\n%s", diff)
	}
}

// TestListedInputAcceptsWhatTheFullOneDoes: whatever arguments the full input accepts,
// the listed one accepts, and it still refuses what breaks a constraint it keeps,
// including one inside a subschema it says once (so the references resolve).
func TestListedInputAcceptsWhatTheFullOneDoes(t *testing.T) {
	t.Parallel()
	listed, err := ListedInput(json.RawMessage(boilerplate))
	if err != nil {
		t.Fatal(err)
	}
	full, err := NewValidator(json.RawMessage(boilerplate))
	if err != nil {
		t.Fatal(err)
	}
	lean, err := NewValidator(listed)
	if err != nil {
		t.Fatalf("the listed schema does not compile: %v\n%s", err, listed)
	}
	for _, args := range []string{
		`{"needed":{}}`,
		`{"needed":{},"empty":{}}`,
		`{"needed":{},"body":{"nothing":{}}}`,
		`{"needed":{},"body":{"id":"cus_1","name":"Ada","address":"","flag":true,"amount":5}}`,
		`{"needed":{},"body":{"address":{"city":"Paris"}}}`,
		`{"needed":{},"body":{"controls":{"allowed_categories":["category_01"],"blocked_categories":[],"limits":[{"amount":5,"categories":["category_39"]}]}}}`,
	} {
		if err := full.Validate(json.RawMessage(args)); err != nil {
			t.Fatalf("the full schema refuses %s: %v", args, err)
		}
		if err := lean.Validate(json.RawMessage(args)); err != nil {
			t.Errorf("the listed schema refuses %s, which the full one accepts: %v", args, err)
		}
	}
	for _, args := range []string{
		`{}`,
		`{"needed":{},"body":{"name":"` + strings.Repeat("a", 501) + `"}}`,
		`{"needed":{},"body":{"address":"Paris"}}`,
		`{"needed":{},"body":{"flag":false}}`,
		`{"needed":{},"body":{"controls":{"blocked_categories":["category_40"]}}}`,
		`{"needed":{},"body":{"controls":{"limits":[{"amount":5,"categories":["nope"]}]}}}`,
		`{"needed":{},"body":{"controls":{"limits":[{"categories":[]}]}}}`,
	} {
		if err := full.Validate(json.RawMessage(args)); err == nil {
			t.Fatalf("the full schema accepts %s", args)
		}
		if err := lean.Validate(json.RawMessage(args)); err == nil {
			t.Errorf("the listed schema accepts %s, which breaks a constraint it lists", args)
		}
	}
}

// TestListedInputLeavesReferencesAlone: a schema with references of its own is listed
// without sharing, since moving its subschemas could break what they point to.
func TestListedInputLeavesReferencesAlone(t *testing.T) {
	t.Parallel()
	in := `{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":` + categories + `,"b":` + categories + `,"c":{"$ref":"#/$defs/n"}}}`
	got, err := ListedInput(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(got), "category_00") != 2 {
		t.Errorf("ListedInput shared a subschema of a schema with references of its own: %s", got)
	}
}
