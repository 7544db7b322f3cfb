package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// argsPlan says how to turn an argument written for a portable listing back into one
// for the full schema (Tool.ArgsFrom). A nil plan turns nothing.
type argsPlan struct {
	// text: the listing asked for the value as JSON text; want is the JSON type it
	// decodes to ("" for any).
	text bool
	want string
	// kind is the JSON type of the listed value the plan applies to (object, array),
	// for choosing among a union's branches.
	kind string
	// optional are an object's properties the full schema leaves optional: a null
	// there means the property was left out.
	optional map[string]bool
	props    map[string]*argsPlan
	items    *argsPlan
	anyOf    []*argsPlan // a union's branches, each applied to a value of its kind
	// rename are an object's properties listed under another name (Gemini's
	// parameter names), by the listed name.
	rename map[string]string
	// always says, on the root plan, whether every call's arguments must be read: it
	// decodes JSON text somewhere (hasText) or renames (worked out once, when the
	// listing is made); else only arguments holding a null are.
	always bool
}

// unionPlan is the plan of a union whose listed branches are outs, nil when no
// branch turns anything.
func unionPlan(outs []map[string]any, plans []*argsPlan) *argsPlan {
	var branches []*argsPlan
	for i, pl := range plans {
		if pl == nil {
			continue
		}
		if pl.kind == "" && !pl.text {
			pl.kind, _ = outs[i]["type"].(string)
		}
		branches = append(branches, pl)
	}
	if len(branches) == 0 {
		return nil
	}
	return &argsPlan{anyOf: branches}
}

// hasText reports whether the plan decodes JSON text anywhere.
func (pl *argsPlan) hasText() bool {
	if pl == nil {
		return false
	}
	if pl.text || pl.items.hasText() {
		return true
	}
	for _, p := range pl.props {
		if p.hasText() {
			return true
		}
	}
	for _, p := range pl.anyOf {
		if p.hasText() {
			return true
		}
	}
	return false
}

// apply turns the arguments; arguments it cannot read are returned as they came, for
// validation to refuse.
func (pl *argsPlan) apply(args json.RawMessage) (json.RawMessage, error) {
	if pl == nil || (!pl.always && !bytes.Contains(args, []byte("null"))) {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return args, nil
	}
	out, err := json.Marshal(pl.value(v))
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return out, nil
}

// value turns one value.
func (pl *argsPlan) value(v any) any {
	if pl == nil {
		return v
	}
	if pl.text {
		if decoded, ok := pl.decode(v); ok {
			return decoded
		}
		return v // not JSON text of the kind asked for: the value as given
	}
	if len(pl.anyOf) > 0 {
		return pl.branch(v).value(v)
	}
	switch x := v.(type) {
	case map[string]any:
		for listed, name := range pl.rename {
			if e, ok := x[listed]; ok {
				delete(x, listed)
				x[name] = e
			}
		}
		for k, e := range x {
			if e == nil && pl.optional[k] {
				delete(x, k)
				continue
			}
			if sub := pl.props[k]; sub != nil {
				x[k] = sub.value(e)
			}
		}
	case []any:
		if pl.items != nil {
			for i, e := range x {
				x[i] = pl.items.value(e)
			}
		}
	}
	return v
}

// branch picks the union branch that applies to v: the first of its kind, or for a
// string, the first text branch whose JSON text it is.
func (pl *argsPlan) branch(v any) *argsPlan {
	for _, b := range pl.anyOf {
		switch {
		case b.text:
			if _, ok := b.decode(v); ok {
				return b
			}
		case isKind(v, b.kind):
			return b
		}
	}
	return nil
}

// decode reads a string value as the JSON text of a value of the kind the plan wants.
func (pl *argsPlan) decode(v any) (any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var decoded any
	if dec.Decode(&decoded) != nil || dec.More() || !isKind(decoded, pl.want) {
		return nil, false
	}
	return decoded, true
}

// isKind reports whether a decoded value is of the JSON type ("" for any).
func isKind(v any, kind string) bool {
	switch kind {
	case "":
		return true
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	}
	return false
}
