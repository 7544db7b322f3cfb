package catalog

import (
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

// TestCatalogRegisters builds every catalog API into a registry: at least 30 APIs, each
// with a default set of 8 to 30 tools named as its preset says, marked as catalog
// providers that a person connects.
func TestCatalogRegisters(t *testing.T) {
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	if len(presets) < 30 {
		t.Errorf("the catalog holds %d APIs, want at least 30", len(presets))
	}
	reg := providers.NewRegistry()
	if err := Register(t.Context(), reg); err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		spec, ok := reg.Provider(p.Name)
		if !ok {
			t.Errorf("%s is not registered", p.Name)
			continue
		}
		if !spec.Catalog || !spec.Connectable() || spec.Title != p.Title {
			t.Errorf("%s: catalog %v, connectable %v, title %q; want a connectable catalog provider titled %q", p.Name, spec.Catalog, spec.Connectable(), spec.Title, p.Title)
		}
		tools := reg.Tools(p.Name)
		if n := len(tools); n < 8 || n > 30 || n != len(p.Tools) {
			t.Errorf("%s has %d tools, its preset %d; want 8 to 30", p.Name, n, len(p.Tools))
		}
		names := map[string]bool{}
		for _, tl := range tools {
			names[tl.Name] = true
		}
		for _, pt := range p.Tools {
			if !names[p.Name+"_"+pt.Name] {
				t.Errorf("%s: no tool %s_%s", p.Name, p.Name, pt.Name)
			}
		}
	}
}
