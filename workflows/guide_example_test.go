package workflows

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/router"
)

// allCatalog is every provider's tools, each on one connection labelled octocat.
type allCatalog struct{ reg *providers.Registry }

func (c allCatalog) Tools(context.Context, switchboard.Principal) ([]router.Binding, error) {
	var out []router.Binding
	for _, spec := range c.reg.Providers() {
		for _, t := range c.reg.Tools(spec.Name) {
			out = append(out, router.Binding{Tool: t, Connections: []router.ConnectionRef{{ID: "con_" + spec.Name, Label: "octocat", Account: "octocat"}}})
		}
	}
	return out, nil
}

// TestGuideExampleIsValid checks that the workflow docs/guide/workflows.md shows is one a save
// accepts, against the real providers' tools.
func TestGuideExampleIsValid(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/guide/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n")
	if !ok {
		t.Fatal("docs/guide/workflows.md has no YAML example")
	}
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/guide/workflows.md's YAML example does not end")
	}
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	def, err := Parse([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), prog, allCatalog{reg}, alice); err != nil {
		t.Fatal(err)
	}
}

// TestGuideShowsTheExamples checks that the example workflows the guide shows are the
// ones the tests save and run (testdata/examples), word for word.
func TestGuideShowsTheExamples(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("../docs/guide/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ci_pipeline", "purchase_approval"} {
		src, err := os.ReadFile("testdata/examples/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(guide), "```yaml\n"+string(src)+"```") {
			t.Errorf("docs/guide/workflows.md does not show testdata/examples/%s.yaml as it is", name)
		}
		def, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(def); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
