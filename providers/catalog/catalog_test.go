package catalog

import (
	"encoding/json"
	"runtime"
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
		names, curated := map[string]bool{}, map[string]bool{}
		for _, pt := range p.Tools {
			if curated[pt.Name] {
				t.Errorf("%s: two tools named %s", p.Name, pt.Name)
			}
			curated[pt.Name] = true
		}
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

// BenchmarkCatalogRegister builds and registers every catalog API (the start-up cost
// SWITCHBOARD_CATALOG=on adds) and reports the heap the registered catalog holds and
// the bytes its default tools take in a tools/list answer.
func BenchmarkCatalogRegister(b *testing.B) {
	b.ReportAllocs()
	var reg *providers.Registry
	for b.Loop() {
		reg = providers.NewRegistry()
		if err := Register(b.Context(), reg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var before, after runtime.MemStats
	reg = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	reg = providers.NewRegistry()
	if err := Register(b.Context(), reg); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
	tools, size := 0, 0
	for _, spec := range reg.Providers() {
		for _, tl := range reg.Tools(spec.Name) {
			in, out := tl.ListedFor(providers.ProfilePortable)
			entry, err := json.Marshal(map[string]any{"name": tl.Name, "title": tl.Info.Title, "description": tl.DescriptionFor(providers.ProfilePortable),
				"inputSchema": in, "outputSchema": out, "annotations": map[string]bool{"readOnlyHint": tl.Info.Hints.ReadOnly, "destructiveHint": tl.Info.Hints.Destructive, "idempotentHint": tl.Info.Hints.Idempotent, "openWorldHint": true}})
			if err != nil {
				b.Fatal(err)
			}
			tools++
			size += len(entry)
		}
	}
	b.ReportMetric(float64(tools), "tools")
	b.ReportMetric(float64(size)/1024, "tools/list-KB")
	runtime.KeepAlive(reg)
}
