package providers

import (
	"encoding/json"
	"reflect"
	"strings"
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
	return json.Marshal(filled(reflect.ValueOf(v)).Interface())
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
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			field := c.Field(i)
			omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			switch {
			case field.Kind() == reflect.Slice && field.IsNil() && !omit && field.Type().Elem().Kind() != reflect.Uint8:
				field.Set(reflect.MakeSlice(field.Type(), 0, 0))
			case field.Kind() == reflect.Map && field.IsNil() && !omit:
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
