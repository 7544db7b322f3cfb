package catalog

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestDefaultToolsAreWrittenForAgents: every default tool's description is the
// preset's own, written for an agent choosing a tool (what it does, when to use it,
// what it needs and what it returns), not the API description's summary or opening
// sentence: 80 to 1,024 characters, plain text. An API connected with OAuth asks only
// for the scopes its default tools name (a preset naming none would ask for every
// scope its description lists).
func TestDefaultToolsAreWrittenForAgents(t *testing.T) {
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		t.Run(p.Name, func(t *testing.T) {
			data, err := Description(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			upstream := operationTexts(t, data)
			for _, tl := range p.Tools {
				d := strings.TrimSpace(tl.Description)
				if n := utf8.RuneCountInString(d); n < 80 || n > 1024 {
					t.Errorf("%s: the description has %d characters, want 80 to 1,024: %q", tl.Name, n, d)
				}
				if strings.Contains(d, "](") || strings.Contains(d, "<") || strings.Contains(d, "`") {
					t.Errorf("%s: the description is not plain text (markdown or HTML): %q", tl.Name, d)
				}
				for _, u := range upstream[tl.Operation] {
					if u != "" && strings.HasPrefix(normalText(d), u) {
						t.Errorf("%s: the description opens with the API description's own text %q; write it for an agent", tl.Name, u)
					}
				}
			}
			if !p.OAuthApp {
				return
			}
			spec, err := build(t.Context(), p, data)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			if p.OAuth != nil {
				for _, s := range p.OAuth.Scopes {
					want[s] = true
				}
			}
			for _, tl := range p.Tools {
				for _, s := range tl.Scopes {
					want[s] = true
				}
			}
			if len(want) == 0 {
				t.Errorf("the preset connects with OAuth but no default tool names a scope")
			}
			for _, s := range spec.OAuth.Scopes {
				if !want[s] {
					t.Errorf("connecting asks for scope %q, which no default tool names", s)
				}
			}
		})
	}
}

// operationTexts maps each operationId of a description to its summary, its
// description and the description's first sentence, normalised.
func operationTexts(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, item := range doc.Paths {
		for _, raw := range item {
			var op struct {
				OperationID string `json:"operationId"`
				Summary     string `json:"summary"`
				Description string `json:"description"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			first, _, _ := strings.Cut(op.Description, ". ")
			out[op.OperationID] = []string{normalText(op.Summary), normalText(op.Description), normalText(first)}
		}
	}
	return out
}

func normalText(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), ".")
}
