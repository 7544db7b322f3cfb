package openapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

// nested is a description whose one operation's body nests objects in objects until
// the description nests depth deep (depth even, at least 8): seven levels lead to the
// schema, each object schema takes two ({"properties": {"a": …}}) and the innermost one.
func nested(depth int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Deep","version":"1"},"servers":[{"url":"https://api.example.com"}],` +
		`"paths":{"/x":{"post":{"operationId":"x","responses":{"200":{"description":"ok"}},"requestBody":{"content":{"application/json":{"schema":`)
	levels := (depth - 8) / 2
	for range levels {
		b.WriteString(`{"type":"object","properties":{"a":`)
	}
	b.WriteString(`{"type":"string"}`)
	for range levels {
		b.WriteString(`}}`)
	}
	b.WriteString(`}}}}}}}`)
	return []byte(b.String())
}

// nestedYAML is nested's description as block YAML.
func nestedYAML(depth int) []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: Deep, version: '1'}\nservers: [{url: 'https://api.example.com'}]\n" +
		"paths:\n  /x:\n    post:\n      operationId: x\n      responses: {'200': {description: ok}}\n" +
		"      requestBody:\n        content:\n          application/json:\n            schema:\n")
	indent := 14
	for range (depth - 8) / 2 {
		fmt.Fprintf(&b, "%[1]*[2]stype: object\n%[1]*[2]sproperties:\n%[1]*[2]s  a:\n", indent, "")
		indent += 4
	}
	fmt.Fprintf(&b, "%*stype: string\n", indent, "")
	return []byte(b.String())
}

// TestLoadBounds: a description larger than MaxDescription, or nesting deeper than
// MaxDepth (JSON, or YAML, block or flow), is an invalid "description" error that says
// so before anything parses it: each is broken past the point where the bound is found,
// which a parser would have named instead. At the bound, it loads.
func TestLoadBounds(t *testing.T) {
	t.Parallel()
	broken := func(b []byte) []byte { return append(b, `,"tail": [`...) } // unterminated after the deep part
	tests := []struct {
		name string
		data []byte
		want string // in the error; "" for none
	}{
		{name: "json at the bound", data: nested(MaxDepth)},
		{name: "yaml at the bound", data: nestedYAML(MaxDepth)},
		{name: "json too deep", data: broken(nested(MaxDepth + 2)), want: fmt.Sprintf("more than %d levels deep", MaxDepth)},
		{name: "yaml too deep", data: append(nestedYAML(3*MaxDepth), "  : : [\n"...), want: fmt.Sprintf("more than %d levels deep", MaxDepth)},
		{name: "yaml flow too deep", data: []byte("openapi: 3.0.3\nx: " + strings.Repeat("{a: ", 3*MaxDepth) + "1\n  : ]["), want: fmt.Sprintf("more than %d levels deep", MaxDepth)},
		{name: "json deep in arrays", data: []byte(`{"openapi":"3.0.3","x":` + strings.Repeat("[", MaxDepth) + `"`), want: fmt.Sprintf("more than %d levels deep", MaxDepth)},
		{name: "too large", data: append([]byte("{"), make([]byte, MaxDescription)...), want: fmt.Sprintf("larger than %d MB", MaxDescription>>20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := Load(t.Context(), tt.data)
			if tt.want == "" {
				if err != nil || doc == nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			var e *switchboard.Error
			if !errors.As(err, &e) || e.Code != switchboard.CodeInvalid || e.Field != "description" || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("Load: %v, want an invalid description error saying %q", err, tt.want)
			}
		})
	}
}

// TestFlattenKeepsSchemas: a body nested as deep as the bound allows becomes a tool
// whose input schema still nests (as far as tools' schemas go) and whose description's
// schema still holds the innermost type, moved to a named schema and referred to.
func TestFlattenKeepsSchemas(t *testing.T) {
	t.Parallel()
	doc, err := Load(t.Context(), nested(MaxDepth))
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Paths.Value("/x").Post.RequestBody.Value.Content["application/json"].Schema
	levels := 0
	for s.Value.Properties["a"] != nil {
		s = s.Value.Properties["a"]
		levels++
	}
	if want := (MaxDepth - 8) / 2; levels != want || !s.Value.Type.Is("string") {
		t.Errorf("the body nests %d objects down to a %v, want %d down to a string", levels, s.Value.Type, want)
	}
	if len(doc.Components.Schemas) == 0 {
		t.Errorf("no schema was moved to the named schemas")
	}
	spec, err := FromDocument(t.Context(), doc, Options{Name: "deep"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := spec.Operations[0].InputSchema()
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for p := in.Properties["body"]; p != nil && p.Properties["a"] != nil; p = p.Properties["a"] {
		depth++
	}
	if depth != maxSchemaDepth {
		t.Errorf("the tool's body nests %d objects, want %d (as far as tools' schemas go)", depth, maxSchemaDepth)
	}
}

// TestFlattenKeepsPointedSchemas: a schema nested deeply that a reference points into
// stays where the reference expects it, so the description still loads.
func TestFlattenKeepsPointedSchemas(t *testing.T) {
	t.Parallel()
	levels := flattenFrom + 2
	body := strings.Repeat(`{"type":"array","items":`, levels) + `{"type":"string"}` + strings.Repeat("}", levels)
	deep := "#/components/schemas/Deep" + strings.Repeat("/items", levels)
	data := `{"openapi":"3.0.3","info":{"title":"Deep","version":"1"},"servers":[{"url":"https://api.example.com"}],` +
		`"components":{"schemas":{"A":{"$ref":"` + deep + `"},"Deep":` + body + `}},` +
		`"paths":{"/y":{"post":{"operationId":"y","responses":{"200":{"description":"ok"}},` +
		`"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}}`
	doc, err := Load(t.Context(), []byte(data))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	s := doc.Paths.Value("/y").Post.RequestBody.Value.Content["application/json"].Schema
	if s.Value == nil || !s.Value.Type.Is("string") {
		t.Errorf("the reference into the deep schema resolved to %+v, want the innermost string", s.Value)
	}
}

// cancelAfter is a context that reports itself canceled once asked more than n times
// whether it is: a request whose client leaves while its description is read.
type cancelAfter struct {
	context.Context
	n, asked atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.asked.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestLoadStopsWhenCanceled: a parse whose context is canceled while it runs (after its
// first look at it) returns the context's error, and looks at it no more than a few
// times after: it stops, rather than reading the rest.
func TestLoadStopsWhenCanceled(t *testing.T) {
	t.Parallel()
	data := []byte(`{"openapi":"3.0.3","info":{"title":"Wide","version":"1"},"servers":[{"url":"https://api.example.com"}],"paths":{`)
	for i := range 2000 {
		if i > 0 {
			data = append(data, ',')
		}
		data = fmt.Appendf(data, `"/p%d":{"get":{"operationId":"p%d","responses":{"200":{"description":"ok"}}}}`, i, i)
	}
	data = append(data, "}}"...)
	for _, after := range []int64{0, 1, 3} {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			t.Parallel()
			ctx := &cancelAfter{Context: t.Context()}
			ctx.n.Store(after)
			_, err := New(ctx, data, Options{Name: "wide"})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("New: %v, want the context's error", err)
			}
			if asked := ctx.asked.Load(); asked > after+1 {
				t.Errorf("the parse looked at its context %d times after it was canceled", asked-after)
			}
		})
	}
}

// BenchmarkOpenAPIImportNesting imports a description whose request body nests objects
// ever deeper, up to the bound: its cost grows with the depth, not its square.
func BenchmarkOpenAPIImportNesting(b *testing.B) {
	for _, depth := range []int{16, 32, 64, 96, MaxDepth} {
		data := nested(depth)
		b.Run(fmt.Sprint("depth=", depth), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := New(b.Context(), data, Options{Name: "deep"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
