package schemacheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
	"github.com/switchboard-hub/switchboard/workflows"
)

// listedTools are the tools a tenant's URL lists but the imported OpenAPI ones
// (providers/openapi checks those): the built-in providers', the hub's own, and a
// remote MCP server's (testdata/remote_tools.json, a tools/list result).
func listedTools(t *testing.T) map[string][]*providers.Tool {
	t.Helper()
	out := map[string][]*providers.Tool{}
	r := providers.NewRegistry()
	if err := all.Register(r); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Providers() {
		out["built-in"] = append(out["built-in"], r.Tools(p.Name)...)
	}
	hr := providers.NewRegistry()
	if err := hr.Register((&hub.Tools{Workflows: &workflows.Service{}}).Spec()); err != nil {
		t.Fatal(err)
	}
	out["hub"] = hr.Tools(hub.Provider)
	data, err := os.ReadFile(filepath.Join("testdata", "remote_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	spec := &providers.Spec{Name: "remote"}
	for _, rt := range list.Tools {
		op := &providers.Operation[struct{}, struct{}]{Name: "remote", Title: rt.Name, Description: rt.Description}
		tool, err := providers.NewConnectionTool(spec, rt.Name, op, rt.InputSchema, nil)
		if err != nil {
			t.Fatalf("%s: %v", rt.Name, err)
		}
		out["remote"] = append(out["remote"], tool)
	}
	return out
}

// TestEveryListedToolIsOneEachVendorTakes: every tool a tenant lists (built-in, the
// hub's, a remote server's) breaks no vendor's documented rule for function schemas
// as its profile lists it (schemacheck.Vendors), where the full listing broke rules of
// each: OpenAI's strict mode and Anthropic's refused 116 and 115 of the 125 built-in
// tools, Gemini's parameters all of them.
func TestEveryListedToolIsOneEachVendorTakes(t *testing.T) {
	t.Parallel()
	for source, tools := range listedTools(t) {
		before := schemacheck.Tools(tools, providers.ProfileFull)
		for _, r := range schemacheck.Vendors {
			t.Logf("%s: %s refuses %d of %d tools as the full profile lists them", source, r.Vendor, len(before[r.Vendor]), len(tools))
			// The hub's nine tools need not break every vendor's rules; the others do.
			if len(before[r.Vendor]) == 0 && source != "hub" {
				t.Errorf("%s: %s takes every tool as the full profile lists them: the check shows nothing", source, r.Vendor)
			}
		}
		for vendor, bad := range schemacheck.Tools(tools, "") {
			t.Errorf("%s: %s refuses %d tools as their profile lists them: %v", source, vendor, len(bad), bad)
		}
	}
}
