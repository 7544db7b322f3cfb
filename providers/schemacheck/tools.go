package schemacheck

import (
	"fmt"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard/providers"
)

// Rules is one vendor's checker and the schema profile whose listings it must accept.
type Rules struct {
	Vendor  string
	Check   Checker
	Profile providers.SchemaProfile
}

// Vendors are the rules every listed tool is held to: the portable profile's listings
// satisfy OpenAI's strict mode, Anthropic's and Gemini's parametersJsonSchema; the
// gemini profile's satisfy Gemini's parameters (OpenAPI subset), which refuses the
// additionalProperties: false OpenAI requires.
var Vendors = []Rules{
	{"OpenAI strict", OpenAIStrict, providers.ProfilePortable},
	{"Anthropic", Anthropic, providers.ProfilePortable},
	{"Gemini parametersJsonSchema", GeminiJSONSchema, providers.ProfilePortable},
	{"Gemini parameters", GeminiParameters, providers.ProfileGemini},
}

// maxDescription is the longest function description OpenAI and Gemini take.
const maxDescription = 1024

// Tools checks each tool as tools/list serves it under the profile (each rule's own
// when profile is ""): its input schema by every vendor's rules, and its description's
// length. It returns, per vendor, the tools that break a rule, each with its first
// violations.
//
// The input schema is checked as a client hands it to a model: less its x-mcp-header
// annotations (providers.HeaderAnnotation), which are MCP's, for the client's HTTP
// layer (a client of 2026-07-28 must read them to mirror the arguments into headers),
// and which no vendor documents: the checkers refuse them as any unknown keyword.
func Tools(tools []*providers.Tool, profile providers.SchemaProfile) map[string][]string {
	out := map[string][]string{}
	for _, r := range Vendors {
		p := profile
		if p == "" {
			p = r.Profile
		}
		for _, t := range tools {
			in, _ := t.ListedFor(p)
			v := r.Check(providers.WithoutHeaderAnnotations(in))
			if n := utf8.RuneCountInString(t.DescriptionFor(p)); n > maxDescription {
				v = append(v, Violation{Rule: fmt.Sprintf("description of %d characters, more than %d", n, maxDescription)})
			}
			if len(v) > 0 {
				out[r.Vendor] = append(out[r.Vendor], fmt.Sprintf("%s: %v", t.Name, v[:min(len(v), 3)]))
			}
		}
	}
	return out
}
