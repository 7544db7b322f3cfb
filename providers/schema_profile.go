package providers

import (
	"encoding/json"
	"fmt"
	"sync"
)

// SchemaProfile says how tools/list writes a tool's input schema. Whatever the
// profile, the hub validates a call against the tool's full schema.
type SchemaProfile string

const (
	// ProfileFull lists inputs as ListedInput writes them: JSON Schema with every
	// keyword that tells a caller what a valid argument is (bounds, patterns,
	// examples, defaults, open maps).
	ProfileFull SchemaProfile = "full"
	// ProfilePortable lists inputs in the subset of JSON Schema that OpenAI's strict
	// function calling, Anthropic's tool input_schema (strict tool use included) and
	// Gemini's FunctionDeclaration.parametersJsonSchema all accept (see PortableInput).
	ProfilePortable SchemaProfile = "portable"
	// ProfileGemini is the portable listing without additionalProperties and $defs,
	// in the OpenAPI 3.0 subset of Gemini's FunctionDeclaration.parameters: that field
	// refuses additionalProperties, which OpenAI's strict mode requires on every
	// object, so no one schema satisfies both; a client that hands Gemini the
	// listed schema as parameters needs this profile.
	ProfileGemini SchemaProfile = "gemini"
)

// DefaultSchemaProfile is the profile of a scope that sets none.
const DefaultSchemaProfile = ProfilePortable

// ParseSchemaProfile reads a profile's name; "" is the default.
func ParseSchemaProfile(s string) (SchemaProfile, error) {
	switch p := SchemaProfile(s); p {
	case "":
		return DefaultSchemaProfile, nil
	case ProfileFull, ProfilePortable, ProfileGemini:
		return p, nil
	}
	return "", fmt.Errorf("schema profile %q: want full, portable or gemini", s)
}

// profiled is a tool's input as one profile lists it, made on first use and kept:
// the listing costs once per tool, never per call.
type profiled struct {
	once   sync.Once
	schema json.RawMessage
	plan   *argsPlan
	err    error
}

// profiles holds a tool's listings under the profiles other than full.
type profiles struct {
	portable, gemini profiled
}

func (p *profiles) of(profile SchemaProfile) *profiled {
	if profile == ProfileGemini {
		return &p.gemini
	}
	return &p.portable
}

// ListedFor returns the schemas an MCP tools/list serves under the profile: Listed's
// for full; for the others the input PortableInput makes of the full one (a full
// input it cannot make portable is listed as Listed gives it).
func (t *Tool) ListedFor(profile SchemaProfile) (input, output json.RawMessage) {
	input, output = t.Listed()
	if profile == ProfileFull {
		return input, output
	}
	if pr := t.profiled(profile); pr.err == nil {
		input = pr.schema
	}
	return input, output
}

// ArgsFrom turns arguments written for the tool's input as the profile lists it back
// into arguments for its full input schema, which then validates them: a JSON text
// the listing asked for in place of a free-form value is decoded, and a null given
// for a property the full schema leaves optional is left out. Under full, or for a
// tool whose listing changes no argument, the arguments are returned as they came.
func (t *Tool) ArgsFrom(profile SchemaProfile, args json.RawMessage) (json.RawMessage, error) {
	if profile == ProfileFull {
		return args, nil
	}
	pr := t.profiled(profile)
	if pr.err != nil {
		return args, nil
	}
	return pr.plan.apply(args)
}

func (t *Tool) profiled(profile SchemaProfile) *profiled {
	if t.profiles == nil {
		// A Tool made without the constructors: made each time, never kept.
		pr := &profiled{}
		pr.schema, pr.plan, pr.err = portableInput(t.InputSchema, profile)
		return pr
	}
	pr := t.profiles.of(profile)
	pr.once.Do(func() { pr.schema, pr.plan, pr.err = portableInput(t.InputSchema, profile) })
	return pr
}

// DescriptionFor is the tool's description as tools/list serves it under the
// profile: for the portable ones cut at MaxDescription characters (the full text stays
// in the REST catalog).
func (t *Tool) DescriptionFor(profile SchemaProfile) string {
	return ListedDescription(profile, t.Info.Description)
}

// ListedDescription is a description as tools/list serves it under the profile: for
// the portable ones cut at MaxDescription characters.
func ListedDescription(profile SchemaProfile, d string) string {
	if profile == ProfileFull {
		return d
	}
	return cutDescription(d)
}

// Listing is an input schema as a profile lists it, for a tool outside the registry
// (the MCP surface's own), with what turns its arguments back.
type Listing struct {
	Schema json.RawMessage
	plan   *argsPlan
}

// ListInput lists a full input schema under the profile: as given for full, else as
// PortableInput (or GeminiInput) makes it.
func ListInput(profile SchemaProfile, full json.RawMessage) (*Listing, error) {
	if profile == ProfileFull {
		return &Listing{Schema: full}, nil
	}
	s, plan, err := portableInput(full, profile)
	if err != nil {
		return nil, err
	}
	return &Listing{Schema: s, plan: plan}, nil
}

// Args turns arguments written for the listing back into arguments for the full
// schema (see Tool.ArgsFrom).
func (l *Listing) Args(args json.RawMessage) (json.RawMessage, error) { return l.plan.apply(args) }
