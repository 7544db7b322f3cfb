package providertest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

type echoIn struct {
	Text  string  `json:"text" jsonschema:"Text to echo"`
	Times *int    `json:"times,omitempty" jsonschema:"How many times" schema:"minimum=1"`
	Mode  *string `json:"mode,omitempty" jsonschema:"Echo mode" schema:"enum=loud|quiet"`
}

type echoOut struct {
	Lines []string `json:"lines" jsonschema:"The echoed lines"`
	Mode  string   `json:"mode" jsonschema:"The mode used" schema:"enum=loud|quiet"`
}

// fakeTools registers a provider named name with the echo operation, plus a
// second one when two is set.
func fakeTools(t *testing.T, name string, two bool) []*providers.Tool {
	t.Helper()
	run := func(context.Context, *providers.Call, echoIn) (echoOut, error) { return echoOut{}, nil }
	ops := []providers.Op{&providers.Operation[echoIn, echoOut]{Name: "echo", Title: "Echo", Description: "Echo text.", Run: run}}
	if two {
		ops = append(ops, &providers.Operation[echoIn, echoOut]{Name: "shout", Title: "Shout", Description: "Shout text.", Run: run})
	}
	r := providers.NewRegistry()
	err := r.Register(providers.Spec{
		Name:       name,
		Verify:     func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil },
		Operations: ops,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.Tools(name)
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// prepare fills the golden directory; it gets the tools that are checked.
		prepare  func(t *testing.T, dir string, tools []*providers.Tool)
		two      bool
		wantErrs []string
	}{
		{
			name:    "matching golden files",
			prepare: func(t *testing.T, dir string, tools []*providers.Tool) { update(t, dir, tools) },
		},
		{
			name:     "missing golden files",
			prepare:  func(*testing.T, string, []*providers.Tool) {},
			wantErrs: []string{"no golden file", "fake_echo.input.json", "fake_echo.output.json", "go test ./providers/fake -update"},
		},
		{
			name: "changed schema",
			prepare: func(t *testing.T, dir string, tools []*providers.Tool) {
				update(t, dir, tools)
				write(t, filepath.Join(dir, "fake_echo.output.json"), "{\n  \"type\": \"object\"\n}\n")
			},
			wantErrs: []string{"fake_echo", "differs from", "fake_echo.output.json", "-update"},
		},
		{
			name: "golden file of a tool that is gone",
			prepare: func(t *testing.T, dir string, _ []*providers.Tool) {
				update(t, dir, fakeTools(t, "fake", true))
			},
			wantErrs: []string{"fake_shout.input.json belongs to no tool", "fake_shout.output.json belongs to no tool"},
		},
		{
			name: "other files in testdata are left alone",
			prepare: func(t *testing.T, dir string, tools []*providers.Tool) {
				update(t, dir, tools)
				write(t, filepath.Join(dir, "fake_issue.json"), "{}")
				write(t, filepath.Join(dir, "other_echo.input.json"), "{}")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "testdata")
			tools := fakeTools(t, "fake", tt.two)
			tt.prepare(t, dir, tools)
			rec := record(t, func(tb testing.TB) { goldenSchemas(tb, dir, false, tools) })
			assertFailures(t, rec, tt.wantErrs)
		})
	}
}

func TestGoldenSchemasUpdate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "testdata")
	update(t, dir, fakeTools(t, "fake", true))
	tools := fakeTools(t, "fake", false)
	update(t, dir, tools) // removes the shout files
	got, err := os.ReadFile(filepath.Join(dir, "fake_echo.output.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := indent(tools[0].OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("golden file:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "fake_shout.input.json")); !os.IsNotExist(err) {
		t.Errorf("stale golden file not removed: %v", err)
	}
	rec := record(t, func(tb testing.TB) { goldenSchemas(tb, dir, false, tools) })
	assertFailures(t, rec, nil)
}

func TestUpdateFlagRegistered(t *testing.T) {
	t.Parallel()
	f := flag.Lookup("update")
	if f == nil {
		t.Fatal("the -update flag is not registered")
	}
	if updating() {
		t.Errorf("updating() = true without -update")
	}
}

func update(t *testing.T, dir string, tools []*providers.Tool) {
	t.Helper()
	rec := record(t, func(tb testing.TB) { goldenSchemas(tb, dir, true, tools) })
	if rec.Failed() {
		t.Fatalf("update golden files: %s", rec.joined())
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckOutput(t *testing.T) {
	t.Parallel()
	tool := fakeTools(t, "fake", false)[0]
	tests := []struct {
		name     string
		out      any
		wantErrs []string
	}{
		{name: "valid", out: echoOut{Lines: []string{"a"}, Mode: "loud"}},
		{name: "empty list", out: echoOut{Lines: []string{}, Mode: "quiet"}},
		// The hub sends a nil slice as [] (providers.MarshalOutput), which the schema accepts.
		{name: "nil slice where the schema says array", out: echoOut{Mode: "loud"}},
		{name: "value outside the enum", out: echoOut{Lines: []string{}, Mode: "whisper"}, wantErrs: []string{"mode", "loud"}},
		{name: "nil output", out: (*echoOut)(nil), wantErrs: []string{"fake_echo", "object"}},
		{name: "unmarshalable output", out: func() {}, wantErrs: []string{"marshal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := record(t, func(tb testing.TB) { CheckOutput(tb, tool, tt.out) })
			assertFailures(t, rec, tt.wantErrs)
		})
	}
}
