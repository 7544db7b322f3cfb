package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
)

// updateFlag is the -update flag of every test binary that imports this package;
// callers must not define their own. It is registered here, once, only if no one else
// has registered a flag of that name, and read through flag.Lookup at each call.
var _ = registerUpdateFlag()

func registerUpdateFlag() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files of providertest.GoldenSchemas")
	}
	return true
}

// updating reports whether the test binary runs with -update.
func updating() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if b, ok := g.Get().(bool); ok {
			return b
		}
	}
	b, _ := strconv.ParseBool(f.Value.String())
	return b
}

// GoldenSchemas compares every tool's InputSchema and OutputSchema, as indented JSON,
// with testdata/<tool>.input.json and testdata/<tool>.output.json in the calling test's
// package directory, so any schema change shows up in review. With -update
// (`go test ./providers/<name> -update`) it rewrites them instead. A golden file of a
// tool of the same provider that no longer exists fails too.
func GoldenSchemas(t *testing.T, tools []*providers.Tool) {
	t.Helper()
	goldenSchemas(t, "testdata", updating(), tools)
}

// goldenSchemas is GoldenSchemas with the directory and the -update flag passed in.
func goldenSchemas(t testing.TB, dir string, update bool, tools []*providers.Tool) {
	t.Helper()
	if len(tools) == 0 {
		t.Fatalf("providertest.GoldenSchemas: no tools")
	}
	provs := map[string]bool{}
	want := map[string]bool{}
	for _, tool := range tools {
		provs[providerOf(tool)] = true
		for _, g := range []struct {
			suffix string
			schema json.RawMessage
		}{{".input.json", tool.InputSchema}, {".output.json", tool.OutputSchema}} {
			name := tool.Name + g.suffix
			want[name] = true
			got, err := indent(g.schema)
			if err != nil {
				t.Errorf("tool %s: schema %s is not JSON: %v", tool.Name, name, err)
				continue
			}
			path := filepath.Join(dir, name)
			if update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatalf("providertest: %v", err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatalf("providertest: write golden file: %v", err)
				}
				continue
			}
			golden, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				t.Errorf("tool %s: no golden file %s; run `go test ./providers/%s -update` and review it", tool.Name, path, providerOf(tool))
				continue
			}
			if err != nil {
				t.Errorf("tool %s: %v", tool.Name, err)
				continue
			}
			if diff := cmp.Diff(string(golden), string(got)); diff != "" {
				t.Errorf("tool %s: schema differs from %s (-golden +now); if intended, run `go test ./providers/%s -update`:\n%s", tool.Name, path, providerOf(tool), diff)
			}
		}
	}
	for prov := range provs {
		stale, err := filepath.Glob(filepath.Join(dir, prov+"_*.json"))
		if err != nil {
			t.Fatalf("providertest: %v", err)
		}
		for _, p := range stale {
			base := filepath.Base(p)
			if want[base] || !(strings.HasSuffix(base, ".input.json") || strings.HasSuffix(base, ".output.json")) {
				continue
			}
			if update {
				if err := os.Remove(p); err != nil {
					t.Errorf("providertest: remove stale golden file: %v", err)
				}
				continue
			}
			t.Errorf("golden file %s belongs to no tool; run `go test ./providers/%s -update` to remove it", p, prov)
		}
	}
}

func providerOf(tool *providers.Tool) string {
	if tool.Provider != nil && tool.Provider.Name != "" {
		return tool.Provider.Name
	}
	name, _, _ := strings.Cut(tool.Name, "_")
	return name
}

func indent(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// CheckOutput marshals an operation's output and validates it against the tool's
// OutputSchema, so an operation can never return what its schema denies (null for an
// array, a missing required field, a value outside an enum). It marshals as the hub
// does (providers.MarshalOutput).
func CheckOutput(t testing.TB, tool *providers.Tool, out any) {
	t.Helper()
	raw, err := providers.MarshalOutput(out)
	if err != nil {
		t.Errorf("tool %s: marshal output: %v", tool.Name, err)
		return
	}
	v, err := providers.NewValidator(tool.OutputSchema)
	if err != nil {
		t.Errorf("tool %s: compile output schema: %v", tool.Name, err)
		return
	}
	if err := v.Validate(raw); err != nil {
		t.Errorf("tool %s: output does not match its output schema: %v\noutput: %s", tool.Name, err, truncate(raw, 2000))
	}
}

// CheckListedOutput is CheckOutput, then the same check against the output schema
// tools/list serves (Tool.Listed), which MCP clients validate structuredContent with.
func CheckListedOutput(t testing.TB, tool *providers.Tool, out any) {
	t.Helper()
	CheckOutput(t, tool, out)
	raw, err := providers.MarshalOutput(out)
	if err != nil {
		t.Errorf("tool %s: marshal output: %v", tool.Name, err)
		return
	}
	_, listed := tool.Listed()
	v, err := providers.NewValidator(listed)
	if err != nil {
		t.Errorf("tool %s: compile the listed output schema: %v", tool.Name, err)
		return
	}
	if err := v.Validate(raw); err != nil {
		t.Errorf("tool %s: output does not match its listed output schema: %v\noutput: %s", tool.Name, err, truncate(raw, 2000))
	}
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return fmt.Sprintf("%s… (%d bytes)", b[:n], len(b))
}
