package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
	"github.com/switchboard-hub/switchboard/providers/providertest"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
)

// TestCatalogToolsAgainstTheirDescriptions calls every default tool of every catalog
// API against a fake upstream made from the API's own description: the fake routes the
// request to the description's operation and checks its method, path, parameters, body
// and credential (openapi3filter), and answers with a body generated from the
// operation's success response schema, itself checked against that schema; the tool's
// result must match the tool's output schema, and the tool must have run the operation
// its preset names. The listed schemas of every default tool must pass every vendor's
// portable-schema checker.
func TestCatalogToolsAgainstTheirDescriptions(t *testing.T) {
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		t.Run(p.Name, func(t *testing.T) {
			shipped, err := Description(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			data := forFake(t, shipped)
			spec, err := build(t.Context(), p, data)
			if err != nil {
				t.Fatal(err)
			}
			tools := providertest.Tools(t, spec)
			listed := make([]*providers.Tool, 0, len(tools))
			for _, tl := range tools {
				listed = append(listed, tl)
			}
			for vendor, bad := range schemacheck.Tools(listed, "") {
				t.Errorf("%s refuses %d tools: %s", vendor, len(bad), strings.Join(bad, "; "))
			}
			doc, err := openapi.Load(t.Context(), data)
			if err != nil {
				t.Fatal(err)
			}
			base, err := url.Parse(spec.BaseURL)
			if err != nil {
				t.Fatal(err)
			}
			up := newFake(t, doc, base.Path)
			for _, pt := range p.Tools {
				tool := tools[p.Name+"_"+pt.Name]
				if tool == nil {
					t.Errorf("no tool %s_%s", p.Name, pt.Name)
					continue
				}
				args, err := json.Marshal(arguments(t, tool, doc, pt.Operation))
				if err != nil {
					t.Fatal(err)
				}
				if err := tool.Validate(args); err != nil {
					t.Errorf("%s: the generated arguments %s do not fit its input schema: %v", tool.Name, args, err)
					continue
				}
				before := len(up.seen())
				out, err := tool.Op.Invoke(context.Background(), providertest.NewCall(t, &spec, up.URL+base.Path, "catalog-token"), args)
				if err != nil {
					t.Errorf("%s(%s): %v", tool.Name, args, err)
					continue
				}
				seen := up.seen()
				if len(seen) != before+1 || seen[len(seen)-1] != pt.Operation {
					t.Errorf("%s ran %v, want the operation %s", tool.Name, seen[before:], pt.Operation)
				}
				checkOutput(t, tool, out)
			}
			up.check(t)
		})
	}
}

// arguments are the least arguments of a tool: its required parameters from its input
// schema, and a body generated from the request body schema of the description's
// operation, each required property set.
func arguments(t *testing.T, tool *providers.Tool, doc *openapi3.T, operationID string) map[string]any {
	schema := schemaOf(t, tool)
	defs, _ := schema["$defs"].(map[string]any)
	args, _ := sample(resolveDefs(schema, defs, 0).(map[string]any), 0).(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID != operationID || op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, name := range []string{"request_body", "body"} {
				if _, ok := props[name]; !ok {
					continue
				}
				for _, ct := range sortedKeys(op.RequestBody.Value.Content) {
					args[name] = generate(op.RequestBody.Value.Content[ct].Schema, 0, true)
					break
				}
				break
			}
		}
	}
	return args
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fromPattern is the shortest string a regular expression matches.
func fromPattern(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) == 0 {
				return false
			}
			b.WriteRune(r.Rune[0])
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('x')
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpConcat:
			for _, sub := range r.Sub {
				if !walk(sub) {
					return false
				}
			}
		case syntax.OpAlternate:
			return walk(r.Sub[0])
		case syntax.OpPlus:
			return walk(r.Sub[0])
		case syntax.OpRepeat:
			for range r.Min {
				if !walk(r.Sub[0]) {
					return false
				}
			}
		case syntax.OpStar, syntax.OpQuest, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		default:
			return false
		}
		return true
	}
	if !walk(re) {
		return "", false
	}
	return b.String(), true
}

// forFake is a description as its fake serves it: without the servers of its paths and
// operations (the tools would call those instead of the fake), and without the
// patterns Go's regular expressions cannot compile (lookaheads, \Z), which the fake's
// validator would refuse every value for.
func forFake(t *testing.T, data []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if paths, ok := doc["paths"].(map[string]any); ok {
		for _, item := range paths {
			if m, ok := item.(map[string]any); ok {
				delete(m, "servers")
				for _, op := range m {
					if o, ok := op.(map[string]any); ok {
						delete(o, "servers")
					}
				}
			}
		}
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if p, ok := v["pattern"].(string); ok {
				if _, err := regexp.Compile(p); err != nil {
					delete(v, "pattern")
				}
			}
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resolveDefs replaces a schema's references to its own $defs with what they name.
func resolveDefs(v any, defs map[string]any, depth int) any {
	if depth > 30 {
		return map[string]any{}
	}
	switch v := v.(type) {
	case map[string]any:
		if r, ok := v["$ref"].(string); ok && strings.HasPrefix(r, "#/$defs/") {
			return resolveDefs(defs[strings.TrimPrefix(r, "#/$defs/")], defs, depth+1)
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = resolveDefs(x, defs, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = resolveDefs(x, defs, depth+1)
		}
		return out
	}
	return v
}

// schemaOf is a tool's input schema as JSON values.
func schemaOf(t *testing.T, tool *providers.Tool) map[string]any {
	in, _ := tool.Listed()
	var s map[string]any
	if err := json.Unmarshal(in, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkOutput fails t unless out matches the tool's output schema.
func checkOutput(t *testing.T, tool *providers.Tool, out any) {
	t.Helper()
	_, outSchema := tool.Listed()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(outSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("output.json")
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s: its result does not match its output schema: %v", tool.Name, err)
	}
}

// sample is the least value a JSON schema admits: an enum's first value, a minimum, a
// required property each, one item where items are required.
func sample(s map[string]any, depth int) any {
	if s == nil || depth > 12 {
		return nil
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, v := range enum {
			if v != nil {
				return v
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] != "null" {
					return sample(m, depth+1)
				}
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		for _, a := range all {
			if m, ok := sample(a.(map[string]any), depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
		}
		return merged
	}
	typ := s["type"]
	if list, ok := typ.([]any); ok {
		typ = nil
		for _, v := range list {
			if v != "null" {
				typ = v
				break
			}
		}
	}
	switch typ {
	case "string":
		switch s["format"] {
		case "date":
			return "2026-01-02"
		case "date-time":
			return "2026-01-02T03:04:05Z"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		case "email":
			return "ada@example.com"
		case "uri", "url":
			return "https://example.com/x"
		case "byte":
			return "eA=="
		}
		v := "x"
		if p, ok := s["pattern"].(string); ok {
			if g, ok := fromPattern(p); ok {
				return g
			}
		}
		if n, ok := s["minLength"].(float64); ok && n > 1 {
			v = strings.Repeat("x", int(n))
		}
		return v
	case "integer", "number":
		v := 1.0
		if m, ok := s["minimum"].(float64); ok {
			v = m
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok {
			v = m + 1
		}
		if m, ok := s["maximum"].(float64); ok && v > m {
			v = m
		}
		return v
	case "boolean":
		return true
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for range n {
			out = append(out, sample(items, depth+1))
		}
		return out
	case "object", nil:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		out := map[string]any{}
		for _, r := range req {
			name, _ := r.(string)
			if p, ok := props[name].(map[string]any); ok {
				out[name] = sample(p, depth+1)
			} else {
				out[name] = "x"
			}
		}
		return out
	}
	return nil
}

// fake is an upstream generated from a description.
type fake struct {
	*providertest.Upstream
	mu       sync.Mutex
	problems []string
	ids      []string
}

// newFake serves doc's operations under prefix, checking each request against the
// description and answering from the operation's success response schema.
func newFake(t *testing.T, doc *openapi3.T, prefix string) *fake {
	t.Helper()
	f := &fake{}
	var router routers.Router
	var once sync.Once
	var routerErr error
	f.Upstream = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { router, routerErr = gorillamux.NewRouter(doc) })
		if routerErr != nil {
			f.problem("route the description: " + routerErr.Error())
			http.Error(w, routerErr.Error(), http.StatusInternalServerError)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := router.FindRoute(r)
		if err != nil {
			f.problem(r.Method + " " + r.URL.Path + ": " + err.Error())
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		opts := &openapi3filter.Options{AuthenticationFunc: credentialPresent, MultiError: true, SkipSettingDefaults: true}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			f.problem(fmt.Sprintf("%s %s?%s %s: %v", r.Method, r.URL.Path, r.URL.RawQuery, body, err))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status, ct, answer := answerFor(route.Operation)
		if ct != "" {
			resp := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status,
				Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(answer)), Options: opts}
			if err := openapi3filter.ValidateResponse(r.Context(), resp); err != nil {
				f.problem(fmt.Sprintf("the fake's answer to %s does not match its response schema: %v", route.Operation.OperationID, err))
			}
			w.Header().Set("Content-Type", ct)
		}
		f.mu.Lock()
		f.ids = append(f.ids, route.Operation.OperationID)
		f.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write(answer)
	})
	doc.Servers = openapi3.Servers{{URL: f.URL + prefix}}
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
		for _, op := range item.Operations() {
			op.Servers = nil
		}
	}
	return f
}

func (f *fake) problem(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.problems = append(f.problems, p)
}

func (f *fake) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ids...)
}

func (f *fake) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.problems {
		t.Errorf("the description refuses: %s", p)
	}
}

// answerFor is an operation's first 2xx response: its status, content type and a body
// generated from its schema (JSON), or no body when it declares none.
func answerFor(op *openapi3.Operation) (int, string, []byte) {
	codes := make([]string, 0)
	for code := range op.Responses.Map() {
		if strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes)
	for _, code := range codes {
		status := 200
		_, _ = fmt.Sscan(strings.ReplaceAll(code, "X", "0"), &status)
		ref := op.Responses.Value(code)
		if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
			return status, "", nil
		}
		for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
			if mt := ref.Value.Content.Get(ct); mt != nil {
				raw, _ := json.Marshal(generate(mt.Schema, 0, false))
				return status, "application/json", raw
			}
		}
		keys := make([]string, 0, len(ref.Value.Content))
		for k := range ref.Value.Content {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		mt := ref.Value.Content[keys[0]]
		if strings.Contains(keys[0], "json") {
			raw, _ := json.Marshal(generate(mt.Schema, 0, false))
			return status, keys[0], raw
		}
		return status, keys[0], []byte("x")
	}
	return http.StatusOK, "application/json", []byte("{}")
}

// generate is a value of a schema: each required property (but those read-only in a
// request, or write-only in an answer), one item of an array, the first alternative of
// oneOf and anyOf, the shortest string a pattern admits.
func generate(ref *openapi3.SchemaRef, depth int, request bool) any {
	if ref == nil || ref.Value == nil || depth > 20 {
		return map[string]any{}
	}
	s := ref.Value
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.OneOf) > 0 {
		return generate(s.OneOf[0], depth+1, request)
	}
	if len(s.AnyOf) > 0 {
		return generate(s.AnyOf[0], depth+1, request)
	}
	if len(s.AllOf) > 0 || s.Type == nil && len(s.Properties) > 0 || s.Type != nil && s.Type.Includes("object") {
		if s.Type == nil && len(s.Properties) == 0 && len(s.Required) == 0 {
			for _, a := range s.AllOf { // a typed value refined by allOf (Box's sequence_id)
				if a != nil && a.Value != nil && a.Value.Type != nil && !a.Value.Type.Includes("object") {
					return generate(a, depth+1, request)
				}
			}
		}
		props, required := map[string]*openapi3.SchemaRef{}, []string{}
		var gather func(*openapi3.Schema, int)
		gather = func(s *openapi3.Schema, d int) {
			if s == nil || d > 20 {
				return
			}
			for k, v := range s.Properties {
				if _, ok := props[k]; !ok {
					props[k] = v
				}
			}
			required = append(required, s.Required...)
			for _, a := range s.AllOf {
				if a != nil {
					gather(a.Value, d+1)
				}
			}
		}
		gather(s, 0)
		if len(props) > 0 || len(required) > 0 || s.Type == nil || s.Type.Includes("object") {
			out := map[string]any{}
			for _, name := range required {
				p := props[name]
				if p != nil && p.Value != nil && (request && p.Value.ReadOnly || !request && p.Value.WriteOnly) {
					continue
				}
				out[name] = generate(p, depth+1, request)
			}
			return out
		}
	}
	switch {
	case s.Type == nil && s.Items != nil, s.Type != nil && s.Type.Includes("array"):
		out := []any{}
		for i := uint64(0); i < max(1, s.MinItems); i++ {
			out = append(out, generate(s.Items, depth+1, request))
		}
		return out
	case s.Type == nil:
		return map[string]any{}
	case s.Type.Includes("string"):
		switch s.Format {
		case "date":
			return "2026-01-02"
		case "date-time":
			return "2026-01-02T03:04:05Z"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		case "email":
			return "ada@example.com"
		case "uri", "url":
			return "https://example.com/x"
		case "byte":
			return "eA=="
		}
		if g, ok := fromPattern(s.Pattern); ok && s.Pattern != "" {
			return g
		}
		return strings.Repeat("x", max(1, int(s.MinLength)))
	case s.Type.Includes("integer"), s.Type.Includes("number"):
		v := 1.0
		if s.Min != nil {
			v = *s.Min + map[bool]float64{true: 1}[s.ExclusiveMin.IsTrue()]
		}
		if s.Max != nil && v > *s.Max {
			v = *s.Max
		}
		if s.MultipleOf != nil && *s.MultipleOf > 0 {
			v = *s.MultipleOf
		}
		return v
	case s.Type.Includes("boolean"):
		return true
	}
	return nil
}

// credentialPresent accepts a request that carries the credential a security scheme
// asks for, where the scheme says.
func credentialPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, r := in.SecurityScheme, in.RequestValidationInput.Request
	present := true
	switch s.Type {
	case "apiKey":
		switch s.In {
		case "header":
			present = r.Header.Get(s.Name) != ""
		case "query":
			present = r.URL.Query().Get(s.Name) != ""
		case "cookie":
			_, err := r.Cookie(s.Name)
			present = err == nil
		}
	case "http":
		if strings.EqualFold(s.Scheme, "basic") {
			_, _, present = r.BasicAuth()
		} else {
			present = strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), strings.ToLower(s.Scheme)+" ")
		}
	case "oauth2", "openIdConnect":
		present = strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if !present {
		return fmt.Errorf("no %s credential (%s %s)", s.Type, s.In, s.Name)
	}
	return nil
}
