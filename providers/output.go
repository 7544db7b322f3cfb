package providers

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// MarshalOutput encodes an operation's output as its output schema describes it. The
// reflected schema says array or object for a slice or map field that is not
// omitempty, and MCP clients validate structuredContent against it, but
// encoding/json writes a nil slice or map as null: such a field is written as [] or
// {} instead. The value itself is left unchanged.
func MarshalOutput(v any) (json.RawMessage, error) {
	if v == nil {
		return json.Marshal(v)
	}
	rv := reflect.ValueOf(v)
	if !needsFill(rv) {
		return json.Marshal(v) // nothing would be written as null: no copy to make
	}
	return json.Marshal(filled(rv).Interface())
}

// outputField is how filled treats one field of a struct type.
type outputField struct {
	index int
	// fill: a slice (not []byte) or map without omitempty or omitzero, which encoding/json
	// would write as null when nil.
	fill bool
}

// outputFields caches, per struct type, the fields filled looks at (reading the tags
// once, not on every call).
var outputFields sync.Map // reflect.Type -> []outputField

func fieldsOf(t reflect.Type) []outputField {
	if f, ok := outputFields.Load(t); ok {
		return f.([]outputField)
	}
	var out []outputField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		k := f.Type.Kind()
		fill := !omit && (k == reflect.Slice && f.Type.Elem().Kind() != reflect.Uint8 || k == reflect.Map)
		out = append(out, outputField{index: i, fill: fill})
	}
	outputFields.Store(t, out)
	return out
}

// needsFill reports whether filled would change anything in v, without copying.
func needsFill(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil() && v.Elem().Kind() == reflect.Struct && needsFill(v.Elem())
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			field := v.Field(f.index)
			if f.fill && field.IsNil() {
				return true
			}
			if needsFill(field) {
				return true
			}
		}
	case reflect.Slice, reflect.Map:
		if v.IsNil() || !holdsNullable(v.Type().Elem()) {
			return false
		}
		if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				if needsFill(v.Index(i)) {
					return true
				}
			}
			return false
		}
		var iter reflect.MapIter // a value, not MapRange's allocated one
		iter.Reset(v)
		for iter.Next() {
			if needsFill(iter.Value()) {
				return true
			}
		}
	}
	return false
}

// filled returns a copy of v in which the nil slices and maps that encoding/json would
// write as null, in fields without omitempty or omitzero, are empty.
func filled(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return v
		}
		p := reflect.New(v.Elem().Type())
		p.Elem().Set(filled(v.Elem()))
		return p
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for _, f := range fieldsOf(v.Type()) {
			field := c.Field(f.index)
			switch {
			case f.fill && field.Kind() == reflect.Slice && field.IsNil():
				field.Set(reflect.MakeSlice(field.Type(), 0, 0))
			case f.fill && field.Kind() == reflect.Map && field.IsNil():
				field.Set(reflect.MakeMap(field.Type()))
			default:
				field.Set(filled(field))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() || !holdsNullable(v.Type().Elem()) {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(filled(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() || !holdsNullable(v.Type().Elem()) {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			c.SetMapIndex(iter.Key(), filled(iter.Value()))
		}
		return c
	}
	return v
}

// holdsNullable reports whether values of t may hold a struct whose fields filled
// changes.
func holdsNullable(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}
