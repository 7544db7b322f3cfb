package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	sj "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/switchboard-hub/switchboard"
)

var printer = message.NewPrinter(language.English)

// Validator checks JSON values against one compiled JSON Schema.
type Validator struct {
	schema *sj.Schema
	fast   *fastSchema // nil when the schema is not of the shape it reads
}

// NewValidator compiles a JSON Schema document.
func NewValidator(schema json.RawMessage) (*Validator, error) {
	doc, err := sj.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := sj.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		return nil, err
	}
	return &Validator{schema: s, fast: compileFast(doc)}, nil
}

// Validate checks a JSON value. A failure is a switchboard invalid error naming the
// first field at fault (dotted path, "" for the whole value) and the reason.
func (v *Validator) Validate(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if v.fast != nil && v.fast.valid(raw) {
		return nil
	}
	return v.full(raw)
}

// full is Validate by the JSON Schema validator alone.
func (v *Validator) full(raw json.RawMessage) error {
	inst, err := sj.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return switchboard.Invalid("arguments", "not valid JSON: "+err.Error())
	}
	err = v.schema.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *sj.ValidationError
	if !errors.As(err, &ve) {
		return switchboard.Invalid("arguments", err.Error())
	}
	var leaves []*sj.ValidationError
	collectLeaves(ve, &leaves)
	// An unknown argument is most often a misspelt one: name it first.
	slices.SortStableFunc(leaves, func(a, b *sj.ValidationError) int {
		_, ua := a.ErrorKind.(*kind.AdditionalProperties)
		_, ub := b.ErrorKind.(*kind.AdditionalProperties)
		switch {
		case ua && !ub:
			return -1
		case ub && !ua:
			return 1
		}
		return 0
	})
	first := describe(leaves[0])
	for _, l := range leaves[1:min(len(leaves), 4)] {
		other := describe(l)
		first.Message += "; also " + other.Field + ": " + other.Message
	}
	return first
}

// collectLeaves gathers the most specific failures.
func collectLeaves(ve *sj.ValidationError, out *[]*sj.ValidationError) {
	if len(ve.Causes) == 0 {
		*out = append(*out, ve)
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, out)
	}
}

func describe(ve *sj.ValidationError) *switchboard.Error {
	path := append([]string(nil), ve.InstanceLocation...)
	reason := ve.ErrorKind.LocalizedString(printer)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		path = append(path, k.Missing[0])
		reason = "is required"
	case *kind.AdditionalProperties:
		path = append(path, k.Properties[0])
		reason = "is not a known argument"
	case *kind.Type:
		reason = fmt.Sprintf("must be %s, not %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		vals := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			b, _ := json.Marshal(w)
			vals = append(vals, string(b))
		}
		reason = "must be one of " + strings.Join(vals, ", ")
	}
	field := strings.Join(path, ".")
	if field == "" {
		field = "arguments"
	}
	return switchboard.Invalid(field, reason)
}
