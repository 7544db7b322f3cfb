package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

// listedCorpus imports one description of the corpus and measures its tools as
// tools/list serves them: name, description, listed input and output schemas, as
// encoding/json writes them (the bytes mcp-go sends). full is the bytes of their full
// output schemas, which stay on each tool for the REST catalog. Each tool's listed
// output must be its lean form, and its listed input must accept what its full input
// accepts (listedAccepts).
func listedCorpus(t *testing.T, file string) (tools []*providers.Tool, listed, portable, full int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(requireCorpus(t), file))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := New(t.Context(), data, Options{Name: "api"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := ConnectionTools(spec, &providers.Spec{Name: "openapi"})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tool := range all {
		in, out := tool.Listed()
		entry, err := json.Marshal(map[string]any{"name": tool.Name, "description": tool.Info.Description, "inputSchema": in, "outputSchema": out})
		if err != nil {
			t.Fatal(err)
		}
		listed += len(entry)
		pin, pout := tool.ListedFor(providers.ProfilePortable)
		pentry, err := json.Marshal(map[string]any{"name": tool.Name, "description": tool.DescriptionFor(providers.ProfilePortable), "inputSchema": pin, "outputSchema": pout})
		if err != nil {
			t.Fatal(err)
		}
		portable += len(pentry)
		full += len(tool.OutputSchema)
		if len(tool.OutputSchema) > 0 {
			if want, err := providers.ListedOutput(tool.OutputSchema); err == nil && string(out) != string(want) {
				t.Errorf("%s lists the output schema %.200s, want its lean form %s", tool.Name, out, want)
			}
		}
		checked += listedAccepts(t, tool.Name, tool.InputSchema, in)
	}
	t.Logf("%s: %d tools: %d bytes listed (%d under the portable profile); their full output schemas %d bytes; %d arguments the full input schemas accept, all accepted by the listed ones",
		file, len(all), listed, portable, full, checked)
	if checked < len(all) {
		t.Errorf("%d arguments checked for %d tools: too few for the check to mean anything", checked, len(all))
	}
	return all, listed, portable, full
}

// listedAccepts checks that the listed input accepts the arguments the full one
// accepts, among arguments made from the full schema with every property filled in
// (each variant takes other enum values and anyOf branches), and returns how many
// the full schema accepted.
func listedAccepts(t *testing.T, tool string, fullSchema, listedSchema json.RawMessage) int {
	t.Helper()
	fullV, err := providers.NewValidator(fullSchema)
	if err != nil {
		t.Fatalf("%s: full input: %v", tool, err)
	}
	listedV, err := providers.NewValidator(listedSchema)
	if err != nil {
		t.Errorf("%s: the listed input does not compile: %v", tool, err)
		return 0
	}
	var s map[string]any
	if err := json.Unmarshal(fullSchema, &s); err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for variant := range 3 {
		args, err := json.Marshal(fillIn(s, variant, 0))
		if err != nil {
			t.Fatal(err)
		}
		if fullV.Validate(args) != nil {
			continue
		}
		accepted++
		if err := listedV.Validate(args); err != nil {
			t.Errorf("%s: the listed input refuses %.300s, which the full one accepts: %v", tool, args, err)
		}
	}
	return accepted
}

// fillIn makes a value of schema s with every property filled in: variant picks which
// enum value and which anyOf or oneOf branch.
func fillIn(s map[string]any, variant, depth int) any {
	if c, ok := s["const"]; ok {
		return c
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[variant%len(enum)]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k].([]any); ok && len(branches) > 0 {
			b, _ := branches[variant%len(branches)].(map[string]any)
			return fillIn(b, variant, depth+1)
		}
	}
	typ, _ := s["type"].(string)
	if list, ok := s["type"].([]any); ok && len(list) > 0 {
		typ = fmt.Sprint(list[0])
	}
	switch {
	case typ == "object" || s["properties"] != nil:
		obj := map[string]any{}
		if depth < 8 {
			props, _ := s["properties"].(map[string]any)
			for name, p := range props {
				if ps, ok := p.(map[string]any); ok {
					obj[name] = fillIn(ps, variant, depth+1)
				}
			}
		}
		return obj
	case typ == "array":
		items, _ := s["items"].(map[string]any)
		if items == nil || depth >= 8 {
			return []any{}
		}
		return []any{fillIn(items, variant, depth+1)}
	case typ == "integer" || typ == "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		return 1
	case typ == "boolean":
		return variant%2 == 0
	case typ == "string":
		switch s["format"] {
		case "date":
			return "2026-01-02"
		case "date-time":
			return "2026-01-02T03:04:05Z"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		}
		n := 1
		if m, ok := s["minLength"].(float64); ok && m > 1 {
			n = int(m)
		}
		return strings.Repeat("x", n)
	}
	return "x"
}

// TestStripeListsLean: a tenant's Stripe API, added by its description, lists its
// 452 tools in at most 1 MB (1,000,000 bytes) of tools/list: every output schema in
// its lean form (16.3 MB listed when they went in full), every input schema without
// the boilerplate ListedInput leaves out (1.11 MB listed with it), and each listed
// input accepting the arguments its full one accepts; under the portable profile it
// lists in at most 1.2 MB, every tool one each vendor accepts (vendorsAccept). The full output schemas stay on each tool for the REST catalog.
func TestStripeListsLean(t *testing.T) {
	t.Parallel()
	tools, listed, portable, full := listedCorpus(t, "stripe.com.json")
	if len(tools) < 400 {
		t.Fatalf("%d tools, want Stripe's 400 and more", len(tools))
	}
	if listed > 1_000_000 {
		t.Errorf("Stripe's tools list in %d bytes, want at most 1 MB (1,000,000 bytes)", listed)
	}
	if portable > 1_200_000 {
		// Strict mode's closed objects and required lists, and a null for each
		// optional property, cost some 200 KB over the lean listing.
		t.Errorf("Stripe's tools list in %d bytes under the portable profile, want at most 1,200,000", portable)
	}
	vendorsAccept(t, tools)
	if full < 1<<20 {
		t.Errorf("the full output schemas hold %d bytes: the catalog lost them", full)
	}
}

// TestGitHubRESTLists: GitHub's REST description (845 operations), whose inputs are
// already plain, lists in what it did (1.04 MB), each listed input accepting the
// arguments its full one accepts, and each tool under the portable profile one every
// vendor accepts (vendorsAccept).
func TestGitHubRESTLists(t *testing.T) {
	t.Parallel()
	tools, listed, _, _ := listedCorpus(t, filepath.Join("github.com", "api.github.com.json"))
	if len(tools) < 800 {
		t.Fatalf("%d tools, want GitHub's 800 and more", len(tools))
	}
	vendorsAccept(t, tools)
	if listed > 1_050_000 {
		t.Errorf("GitHub's REST tools list in %d bytes, want at most 1,050,000", listed)
	}
}
