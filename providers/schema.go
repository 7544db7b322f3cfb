package providers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Reflect returns the JSON Schema of T, a struct. Besides what
// github.com/google/jsonschema-go reflects (types, required fields, the jsonschema tag
// as description), it applies the schema tag, whose comma-separated keys declare what
// prose should not: enum=a|b|c, default=v, minimum=n, maximum=n, minLength=n,
// maxLength=n, minItems=n, maxItems=n, pattern=re (last, it may hold commas), format=f,
// example=v (for an array, example=a|b is one example array of those items).
// Optional pointer fields are described by their element type: an absent field, not
// null, is how a caller leaves them out.
func Reflect[T any]() (*jsonschema.Schema, error) {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s); err != nil {
		return nil, fmt.Errorf("reflect %s: %w", t, err)
	}
	return s, nil
}

// applyTags walks t alongside its schema s.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dropNull(s)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyTags(t.Elem(), s.Items)
		}
	case reflect.Map:
		if s.AdditionalProperties != nil {
			return applyTags(t.Elem(), s.AdditionalProperties)
		}
	case reflect.Struct:
		return applyFieldTags(t, s)
	}
	return nil
}

func applyFieldTags(t reflect.Type, s *jsonschema.Schema) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			// Embedded structs are flattened into their parent, as encoding/json does.
			if err := applyFieldTags(derefType(f.Type), s); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if f.Tag.Get("jsonschema") == "" {
			return fmt.Errorf("field %s has no jsonschema description", f.Name)
		}
		if err := applyTags(f.Type, ps); err != nil {
			return err
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := applySchemaTag(ps, tag); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// dropNull turns ["null", T] into T.
func dropNull(s *jsonschema.Schema) {
	if len(s.Types) == 0 {
		return
	}
	types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(types) == 1 {
		s.Type, s.Types = types[0], nil
		return
	}
	s.Types = types
}

func applySchemaTag(s *jsonschema.Schema, tag string) error {
	for tag != "" {
		var part string
		if strings.HasPrefix(tag, "pattern=") {
			part, tag = tag, "" // a pattern may hold commas: it is always last
		} else {
			part, tag, _ = strings.Cut(tag, ",")
		}
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("schema tag %q: want key=value", part)
		}
		if err := applySchemaKey(s, key, val); err != nil {
			return fmt.Errorf("schema tag %s: %w", key, err)
		}
	}
	return nil
}

func applySchemaKey(s *jsonschema.Schema, key, val string) error {
	switch key {
	case "enum":
		for _, v := range strings.Split(val, "|") {
			lit, err := literal(s.Type, v)
			if err != nil {
				return err
			}
			s.Enum = append(s.Enum, lit)
		}
	case "default":
		lit, err := literal(s.Type, val)
		if err != nil {
			return err
		}
		raw, _ := json.Marshal(lit)
		s.Default = raw
	case "minimum", "maximum":
		n, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return err
		}
		if key == "minimum" {
			s.Minimum = &n
		} else {
			s.Maximum = &n
		}
	case "minLength", "maxLength", "minItems", "maxItems":
		n, err := strconv.Atoi(val)
		if err != nil {
			return err
		}
		switch key {
		case "minLength":
			s.MinLength = &n
		case "maxLength":
			s.MaxLength = &n
		case "minItems":
			s.MinItems = &n
		default:
			s.MaxItems = &n
		}
	case "example":
		ex, err := example(s, val)
		if err != nil {
			return err
		}
		s.Examples = append(s.Examples, ex)
	case "pattern":
		s.Pattern = val
	case "format":
		s.Format = val
	default:
		return fmt.Errorf("unknown key")
	}
	return nil
}

// example converts an example=… value to the schema's type; for an array it is a
// |-separated list of items.
func example(s *jsonschema.Schema, v string) (any, error) {
	if s.Type != "array" {
		return literal(s.Type, v)
	}
	itemType := ""
	if s.Items != nil {
		itemType = s.Items.Type
	}
	var items []any
	for _, part := range strings.Split(v, "|") {
		lit, err := literal(itemType, part)
		if err != nil {
			return nil, err
		}
		items = append(items, lit)
	}
	return items, nil
}

// literal converts a tag value to the JSON type of the schema it belongs to.
func literal(typ, v string) (any, error) {
	switch typ {
	case "integer":
		return strconv.ParseInt(v, 10, 64)
	case "number":
		return strconv.ParseFloat(v, 64)
	case "boolean":
		return strconv.ParseBool(v)
	default:
		return v, nil
	}
}
