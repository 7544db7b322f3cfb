package schemacheck_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
)

// A tool whose input annotates an argument with x-mcp-header keeps the annotation in
// every profile's listing, since a client must read it to send the header; no
// vendor's rules know the keyword (each checker refuses it), and the listing less it,
// as a client hands it to a model, is one each vendor takes.
func TestHeaderAnnotationsAreListedAndCheckedWithout(t *testing.T) {
	t.Parallel()
	input := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"Where","x-mcp-header":"Region"},` +
		`"zone":{"type":"string","x-mcp-header":"Zone"}},"required":["region"]}`)
	op := &providers.Operation[struct{}, struct{}]{Name: "run", Title: "Run", Description: "Run in a region."}
	tool, err := providers.NewConnectionTool(&providers.Spec{Name: "remote"}, "run", op, input, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range schemacheck.Vendors {
		in, _ := tool.ListedFor(r.Profile)
		if !strings.Contains(string(in), `"x-mcp-header":"Region"`) {
			t.Errorf("%s: the listing lost the header: %s", r.Profile, in)
		}
		v := r.Check(in)
		if len(v) == 0 || !strings.Contains(v[0].Rule, "x-mcp-header") {
			t.Errorf("%s takes x-mcp-header, which it does not document: %v", r.Vendor, v)
		}
	}
	for vendor, bad := range schemacheck.Tools([]*providers.Tool{tool}, "") {
		t.Errorf("%s refuses the listing less its annotations: %v", vendor, bad)
	}
}
