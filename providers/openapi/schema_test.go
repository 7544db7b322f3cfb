package openapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestSchemaBudgetIsSpentInOrder: a schema larger than a tool's budget of nodes is cut
// at the same place on every import (its properties taken in name order, the first
// ones whole), so a tool's schema does not change from one start to the next.
func TestSchemaBudgetIsSpentInOrder(t *testing.T) {
	t.Parallel()
	props := openapi3.Schemas{}
	for i := range maxSchemaNodes {
		props[fmt.Sprintf("p%03d", i)] = openapi3.NewSchemaRef("", openapi3.NewObjectSchema().WithProperty("a", openapi3.NewStringSchema()))
	}
	ref := openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: props})
	first, err := json.Marshal(jsonSchema(ref, forInput))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		again, _ := json.Marshal(jsonSchema(ref, forInput))
		if string(again) != string(first) {
			t.Fatalf("the same schema converted twice differs:\n%.300s\n%.300s", first, again)
		}
	}
	got := schemaOf(t, first)
	if at(got, "properties", "p000", "type") != "object" || at(got, "properties", fmt.Sprintf("p%03d", maxSchemaNodes-1), "type") != nil {
		t.Errorf("the budget was not spent in name order: %.300s", first)
	}
}
