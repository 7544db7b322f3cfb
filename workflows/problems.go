package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// Problem is one thing wrong with a definition: the step it belongs to ("" for the
// workflow itself), the field, and what is wrong.
type Problem struct {
	Step    string `json:"step,omitempty" jsonschema:"The step at fault, if any"`
	Field   string `json:"field" jsonschema:"The field at fault"`
	Message string `json:"message" jsonschema:"What is wrong with it"`
}

// Path is where the problem is, as people read it: steps.<step>.<field>, or the field.
func (p Problem) Path() string {
	if p.Step == "" {
		return p.Field
	}
	return "steps." + p.Step + "." + p.Field
}

func (p Problem) String() string { return p.Path() + ": " + p.Message }

// Problems is every problem found in a definition; as an error it names them all.
type Problems []Problem

func (ps Problems) Error() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return "the workflow definition has " + plural(len(ps), "problem") + ": " + strings.Join(parts, "; ")
}

// AsError returns the problems as the hub's invalid error, naming the first one's
// place as the field (nil when there are none).
func (ps Problems) AsError() error {
	if len(ps) == 0 {
		return nil
	}
	return &switchboard.Error{Code: switchboard.CodeInvalid, Field: ps[0].Path(), Message: ps.Error(), Err: ps}
}

// ProblemsOf returns the problems an error carries (none when it carries none).
func ProblemsOf(err error) Problems {
	var ps Problems
	if errors.As(err, &ps) {
		return ps
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool { return errors.As(err, te) }

// jsonFieldNames lists the JSON names of a struct's fields.
func jsonFieldNames(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
