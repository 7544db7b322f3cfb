package providertest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-hub/switchboard/providers"
)

// minDescription is the shortest operation description that can say what the
// operation does, when to use it and what it returns.
const minDescription = 80

var opName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// CheckCatalog fails t for every way the provider's catalog falls short of what an
// agent needs to pick and call an operation right the first time: a spec without a
// title, description or docs; an operation without a title, docs link, a description
// that says what it returns, deliberate hints, described and exemplified parameters,
// or an output schema with properties.
func CheckCatalog(t testing.TB, spec providers.Spec) {
	t.Helper()
	if spec.Title == "" || spec.Description == "" || spec.DocsURL == "" || len(spec.AuthKinds) == 0 {
		t.Errorf("spec %q: Title, Description, DocsURL and AuthKinds are all required", spec.Name)
	}
	reg := providers.NewRegistry()
	if err := reg.Register(spec); err != nil {
		t.Fatalf("register %s: %v", spec.Name, err)
	}
	for _, tool := range reg.Tools(spec.Name) {
		for _, problem := range CatalogProblems(tool) {
			t.Errorf("%s: %s", tool.Name, problem)
		}
	}
}

// CatalogProblems lists what is wrong with one tool's catalog entry; none means it is
// fit for an agent.
func CatalogProblems(tool *providers.Tool) []string {
	var out []string
	add := func(s string) { out = append(out, s) }
	info := tool.Info
	if !opName.MatchString(info.Name) {
		add("operation name must be snake_case")
	}
	if info.Title == "" {
		add("no Title")
	}
	if !strings.HasPrefix(info.DocsURL, "https://") {
		add("DocsURL must link the upstream API documentation over https")
	}
	if len(info.Description) < minDescription {
		add("Description is too short to say what the operation does, when to use it and what it returns")
	}
	if !strings.Contains(strings.ToLower(info.Description), "return") {
		add(`Description must say what the operation returns ("Returns …")`)
	}
	h := info.Hints
	if h.ReadOnly && h.Destructive {
		add("Hints: an operation cannot be both ReadOnly and Destructive")
	}
	if h.ClosedWorld {
		add("Hints: a provider operation reaches its upstream, so ClosedWorld must be false")
	}
	verb, _, _ := strings.Cut(info.Name, "_")
	switch verb {
	case "list", "get", "search", "describe", "lookup", "find":
		if !h.ReadOnly {
			add("Hints: a " + verb + "_ operation must be ReadOnly")
		}
	case "delete", "archive", "remove", "revoke":
		if h.ReadOnly || !h.Destructive {
			add("Hints: a " + verb + "_ operation must be Destructive and not ReadOnly")
		}
	}
	var in jsonschema.Schema
	if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
		add("input schema does not decode: " + err.Error())
	} else {
		checkParams("", &in, add)
	}
	var outSchema jsonschema.Schema
	if err := json.Unmarshal(tool.OutputSchema, &outSchema); err != nil {
		add("output schema does not decode: " + err.Error())
	} else if outSchema.Type != "object" || len(outSchema.Properties) == 0 {
		add("output schema must be an object with properties")
	}
	return out
}

// checkParams walks an input schema's properties: each needs a description, and each
// free-form string or number an example, so an agent sees what a good value looks like.
func checkParams(prefix string, s *jsonschema.Schema, add func(string)) {
	for name, p := range s.Properties {
		path := prefix + name
		if strings.TrimSpace(p.Description) == "" {
			add("parameter " + path + " has no description")
		}
		switch p.Type {
		case "string", "integer", "number":
			if len(p.Enum) == 0 && p.Default == nil && p.Const == nil && len(p.Examples) == 0 {
				add("parameter " + path + " needs an example (schema:\"example=…\"), an enum or a default")
			}
		case "object":
			checkParams(path+".", p, add)
		case "array":
			if p.Items != nil && p.Items.Type == "object" {
				checkParams(path+"[].", p.Items, add)
			}
		}
	}
}
