package all_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
)

// TestMinimalOutputsMatchTheirSchemas validates, for every registered operation, the
// least answer it can give (its output's zero value) against its output schema: the
// MCP clients validate structuredContent against outputSchema and refuse the result
// when it does not match, so a field the upstream may omit must be optional (omitted,
// not a zero value outside its enum, pattern or format).
func TestMinimalOutputsMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := all.Register(r); err != nil {
		t.Fatalf("Register: %v", err)
	}
	type zeroOutput interface {
		ZeroOutput() (json.RawMessage, error)
	}
	for _, p := range r.Providers() {
		for _, tool := range r.Tools(p.Name) {
			t.Run(tool.Name, func(t *testing.T) {
				t.Parallel()
				op, ok := tool.Op.(zeroOutput)
				if !ok {
					t.Fatalf("%T has no ZeroOutput", tool.Op)
				}
				out, err := op.ZeroOutput()
				if err != nil {
					t.Fatal(err)
				}
				v, err := providers.NewValidator(tool.OutputSchema)
				if err != nil {
					t.Fatalf("compile the output schema: %v", err)
				}
				if err := v.Validate(out); err != nil {
					t.Errorf("the minimal output %s does not match the output schema: %v", out, err)
				}
			})
		}
	}
}
