package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

// TestRunOutputsMustFitTheOutputSchema: the output_schema is the flow tools' output
// schema, so a run whose outputs do not fit it fails when it ends, naming the output
// and the reason, rather than answering a result a strict client refuses; outputs that
// fit end the run as before.
func TestRunOutputsMustFitTheOutputSchema(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	done := r.start(context.Background(), t, flowDef, `{"key":"k"}`, "run_outputs_misfit")
	r.caller.next(t).answer(map[string]any{"value": "n3", "items": []string{}, "count": 0}, nil)
	o := finish(t, done)
	e := switchboard.AsError(o.err)
	if o.err == nil || e.Code != switchboard.CodeInvalid || e.Field != "outputs.value" || !strings.Contains(e.Message, "output_schema") {
		t.Fatalf("a run whose output value is n3 = %+v, %v; want refused naming outputs.value", o.res, o.err)
	}

	done = r.start(context.Background(), t, flowDef, `{"key":"k"}`, "run_outputs_fit")
	r.caller.next(t).answer(map[string]any{"value": "n2", "items": []string{}, "count": 0}, nil)
	if o := finish(t, done); o.err != nil || o.res.Outputs["value"] != "n2" {
		t.Fatalf("a run whose output value is n2 = %+v, %v", o.res, o.err)
	}
}

// TestOutputSchemaIsCheckedAgainstTheOutputsWhenSaved: what can be known when the
// workflow is saved is refused then, naming the output: a literal output the schema
// refuses, an output read from a tool whose output schema gives another type, and a
// required output the workflow does not declare.
func TestOutputSchemaIsCheckedAgainstTheOutputsWhenSaved(t *testing.T) {
	t.Parallel()
	r := newEngineRig(t)
	const schemaLine = "output_schema: {type: object, properties: {value: {type: string, enum: [n1, n2]}}}"
	for _, tt := range []struct {
		name, from, to, field, want string
	}{
		{"a literal the schema refuses", `outputs: {value: "${{ steps.read.output.value }}"}`, `outputs: {value: n3}`, "outputs.value", "must be one of"},
		{"a tool's string where the schema says integer", schemaLine,
			"output_schema: {type: object, properties: {value: {type: integer}}}", "outputs.value", "gives string, but output_schema says integer"},
		{"a required output not declared", schemaLine,
			"output_schema: {type: object, properties: {value: {type: string}}, required: [value, total]}", "output_schema", "requires total"},
	} {
		def, err := Parse([]byte(strings.Replace(flowDef, tt.from, tt.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = CompileAndCheck(context.Background(), def, r.eng.catalog, r.p)
		ps := ProblemsOf(err)
		if len(ps) != 1 || ps[0].Field != tt.field || !strings.Contains(ps[0].Message, tt.want) {
			t.Errorf("%s: problems = %v; want %s: %s", tt.name, err, tt.field, tt.want)
		}
	}
	def, _ := Parse([]byte(flowDef))
	if _, _, err := CompileAndCheck(context.Background(), def, r.eng.catalog, r.p); err != nil {
		t.Errorf("outputs that fit = %v", err)
	}
}
