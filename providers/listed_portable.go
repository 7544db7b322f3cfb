package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDescription is the longest description a portable listing carries, in
// characters: what OpenAI and Gemini take for a function's description. The full text
// stays in the REST catalog.
const MaxDescription = 1024

// maxDepth is how deep objects nest in a portable listing (OpenAI's strict mode takes
// 10 levels); a deeper object is listed as JSON text.
const maxDepth = 10

// maxEnumValues bounds the enum values of one portable listing (OpenAI's strict mode
// takes 1,000 in a schema); an enum past it is left out, and the hub still checks it.
const maxEnumValues = 1000

// bigEnum and bigEnumText: an enum of more than bigEnum values may hold at most
// bigEnumText characters in OpenAI's strict mode; a longer one is left out.
const (
	bigEnum     = 250
	bigEnumText = 15000
)

// portableFormats are the string formats every vendor takes: Gemini's Developer API
// takes only date-time (and its own enum), OpenAI and Anthropic take it too.
var portableFormats = []string{"date-time"}

// PortableInput returns the input schema as the portable profile lists it, a schema
// that OpenAI's strict function calling, Anthropic's tool input_schema (strict tool
// use included) and Gemini's parametersJsonSchema all accept, as schemacheck's
// checkers encode their documented rules:
//
//   - every object is closed (additionalProperties: false) and lists every property
//     in required; a property the full schema leaves optional may be null instead
//     (anyOf with {"type":"null"}, the form all three take), and the hub takes a null
//     there for the property left out;
//   - type arrays, oneOf and a nullable enum become anyOf; allOf is merged;
//     references are followed (a recursive one, which Anthropic refuses, becomes
//     JSON text) and repeated subschemas are then said once under $defs;
//   - a value of any type, a free-form map (an object with no properties) and an
//     object nested deeper than 10 levels are listed as a string holding the value as
//     JSON text, which the hub decodes back (Tool.ArgsFrom);
//   - only type, description, properties, required, additionalProperties, items,
//     anyOf, string enums and the date-time format are kept: examples, defaults,
//     titles, lengths, patterns, bounds and other formats go (the hub still checks
//     them); a number or boolean enum is said in the description;
//   - an x-mcp-header annotation (HeaderAnnotation) stays on a property listed as a
//     string, an integer or a boolean: it is MCP's, for the client's HTTP layer, not
//     a keyword for the model (a client mirroring it takes it out before it hands the
//     schema on, as WithoutHeaderAnnotations does), and a client not told of the
//     header could not call the tool;
//   - descriptions are cut at MaxDescription characters.
//
// The listing is looser than the full schema but in two places: an object with both
// named properties and others allowed lists only the named ones, and a root with no
// properties takes no arguments.
func PortableInput(full json.RawMessage) (json.RawMessage, error) {
	s, _, err := portableInput(full, ProfilePortable)
	return s, err
}

// GeminiInput is PortableInput for Gemini's FunctionDeclaration.parameters (the
// gemini profile): no additionalProperties, no $defs, and nullable: true where the
// portable listing has a null branch.
func GeminiInput(full json.RawMessage) (json.RawMessage, error) {
	s, _, err := portableInput(full, ProfileGemini)
	return s, err
}

func portableInput(full json.RawMessage, profile SchemaProfile) (json.RawMessage, *argsPlan, error) {
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, nil, fmt.Errorf("portable schema: %w", err)
	}
	p := &porter{root: root, gemini: profile == ProfileGemini, resolving: map[string]bool{}}
	out, plan := p.port(p.rootObject(root), 0)
	if out["type"] != "object" || out["properties"] == nil {
		// The root is an object whatever it was: a root with no properties takes none.
		out = map[string]any{"type": "object", "properties": map[string]any{}, "required": []any{}}
		if !p.gemini {
			out["additionalProperties"] = false
		}
		plan = nil
	}
	walkSchemas(out, func(s map[string]any) {
		if d, ok := s["description"].(string); ok {
			s["description"] = cutDescription(d)
		}
	})
	if !p.gemini {
		shareRepeatsFrom(out, portableSharedMin)
	}
	p.limitEnums(out)
	keepValidHeaderAnnotations(out)
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, nil, err
	}
	if plan != nil {
		plan.always = plan.hasText() || plan.rename != nil
	}
	return raw, plan, nil
}

// porter makes one portable listing.
type porter struct {
	root      map[string]any
	gemini    bool
	resolving map[string]bool
}

// port lists one schema; depth counts the objects it is nested in. The plan says how
// to turn an argument given for the listed schema back into one for s, nil when there
// is nothing to turn.
func (p *porter) port(s map[string]any, depth int) (map[string]any, *argsPlan) {
	out, plan := p.portOne(s, depth)
	if h, ok := s[HeaderAnnotation]; ok && headerPrimitive(out) {
		// The argument stays a header's type: the listing keeps the header (an
		// optional one listed nullable, anyOf with null, loses it, and its calls are
		// not asked for it).
		out[HeaderAnnotation] = h
	}
	return out, plan
}

// portOne is port less the header annotation.
func (p *porter) portOne(s map[string]any, depth int) (map[string]any, *argsPlan) {
	s, ref, ok := p.resolve(s)
	if !ok {
		return p.text(s, ""), &argsPlan{text: true}
	}
	if ref != "" {
		p.resolving[ref] = true
		defer delete(p.resolving, ref)
	}
	s = p.mergeAllOf(s)
	alts, nullable := p.alternatives(s)
	desc, _ := s["description"].(string)
	var outs []map[string]any
	var plans []*argsPlan
	for _, a := range alts {
		o, pl := p.single(a, depth)
		if d, _ := o["description"].(string); d == desc {
			delete(o, "description")
		}
		if branches, ok := o["anyOf"].([]any); ok && len(o) == 1 {
			// A union in a union: its branches join the outer one's.
			for _, b := range branches {
				outs = append(outs, b.(map[string]any))
			}
			if pl != nil {
				plans = append(plans, pl.anyOf...)
			}
			continue
		}
		outs = append(outs, o)
		plans = append(plans, pl)
	}
	var out map[string]any
	var plan *argsPlan
	switch {
	case len(outs) == 0:
		out = map[string]any{"type": "null"}
	case len(outs) == 1:
		out, plan = outs[0], plans[0]
		if nullable {
			out = p.nullable(out)
		}
		if _, has := out["description"]; has {
			return out, plan // the description the listing says of its one type
		}
	default:
		branches := make([]any, 0, len(outs)+1)
		for _, o := range outs {
			branches = append(branches, o)
		}
		plan = unionPlan(outs, plans)
		if nullable {
			if p.gemini {
				out = map[string]any{"anyOf": branches, "nullable": true}
				break
			}
			branches = append(branches, map[string]any{"type": "null"})
		}
		out = map[string]any{"anyOf": branches}
	}
	if desc != "" {
		out["description"] = desc
	}
	return out, plan
}

// resolve follows a local reference ("#/$defs/…", "#/definitions/…", any JSON pointer
// into the document), keeping the referring schema's description; ok is false for a
// reference being resolved already (recursion) or one that leads nowhere.
func (p *porter) resolve(s map[string]any) (_ map[string]any, ref string, ok bool) {
	ref, _ = s["$ref"].(string)
	if ref == "" {
		return s, "", true
	}
	if p.resolving[ref] || !strings.HasPrefix(ref, "#/") {
		return s, "", false
	}
	var cur any = p.root
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, isMap := cur.(map[string]any)
		if !isMap {
			return s, "", false
		}
		cur = m[part]
	}
	target, isMap := cur.(map[string]any)
	if !isMap {
		return s, "", false
	}
	merged := make(map[string]any, len(target)+1)
	for k, v := range target {
		merged[k] = v
	}
	for k, v := range s {
		if k != "$ref" {
			merged[k] = v
		}
	}
	return merged, ref, true
}

// mergeAllOf folds allOf's branches into the schema: their properties and required
// names join, and a keyword the schema lacks is taken from the first branch with it.
func (p *porter) mergeAllOf(s map[string]any) map[string]any {
	all, ok := s["allOf"].([]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		if k != "allOf" {
			out[k] = v
		}
	}
	props := map[string]any{}
	if own, ok := s["properties"].(map[string]any); ok {
		for k, v := range own {
			props[k] = v
		}
	}
	required, _ := s["required"].([]any)
	required = slices.Clone(required)
	for _, b := range all {
		bs, ok := b.(map[string]any)
		if !ok {
			continue
		}
		bs, _, ok = p.resolve(bs)
		if !ok {
			continue
		}
		bs = p.mergeAllOf(bs)
		if bp, ok := bs["properties"].(map[string]any); ok {
			for k, v := range bp {
				if _, dup := props[k]; !dup {
					props[k] = v
				}
			}
		}
		if br, ok := bs["required"].([]any); ok {
			required = append(required, br...)
		}
		for k, v := range bs {
			if _, has := out[k]; !has && k != "properties" && k != "required" {
				out[k] = v
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
		if out["type"] == nil {
			out["type"] = "object"
		}
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// alternatives splits a schema into the non-null schemas a value may match, and
// whether null is allowed too: anyOf and oneOf branches, each type of a type array,
// and an enum's null.
func (p *porter) alternatives(s map[string]any) (alts []map[string]any, nullable bool) {
	if n, ok := s["nullable"].(bool); ok && n {
		nullable = true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, ok := s[k].([]any)
		if !ok {
			continue
		}
		for _, b := range branches {
			bs, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if r, _, ok := p.resolve(bs); ok {
				bs = r
			}
			if isNull(bs) {
				nullable = true
				continue
			}
			if constraintOnly(bs) {
				continue
			}
			if bs["type"] == nil && s["type"] != nil {
				// A branch that narrows the schema's own type.
				bs = withKey(bs, "type", s["type"])
			}
			alts = append(alts, bs)
		}
		if len(alts) > 0 {
			return alts, nullable
		}
	}
	base := make(map[string]any, len(s))
	for k, v := range s {
		if k != "anyOf" && k != "oneOf" && k != "nullable" {
			base[k] = v
		}
	}
	if enum, ok := base["enum"].([]any); ok && slices.Contains(enum, nil) {
		nullable = true
		base["enum"] = slices.DeleteFunc(slices.Clone(enum), func(v any) bool { return v == nil })
	}
	if types, ok := base["type"].([]any); ok {
		for _, t := range types {
			if t == "null" {
				nullable = true
				continue
			}
			alts = append(alts, withKey(base, "type", t))
		}
		return alts, nullable
	}
	if base["type"] == "null" {
		return nil, true
	}
	return []map[string]any{base}, nullable
}

// single lists a schema of one type (or none: any value).
func (p *porter) single(s map[string]any, depth int) (map[string]any, *argsPlan) {
	typ, _ := s["type"].(string)
	enum, _ := s["enum"].([]any)
	if c, ok := s["const"]; ok {
		enum = []any{c}
	}
	if typ == "" {
		switch {
		case s["properties"] != nil:
			typ = "object"
		case s["items"] != nil:
			typ = "array"
		case len(enum) > 0:
			typ = enumType(enum)
		}
	}
	desc, _ := s["description"].(string)
	switch typ {
	case "object":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 || depth >= maxDepth {
			return p.text(s, "object"), &argsPlan{text: true, want: "object"}
		}
		return p.object(props, s, depth+1)
	case "array":
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return p.text(s, "array"), &argsPlan{text: true, want: "array"}
		}
		o, pl := p.port(items, depth)
		out := map[string]any{"type": "array", "items": o}
		if desc != "" {
			out["description"] = desc
		}
		if pl != nil {
			return out, &argsPlan{kind: "array", items: pl}
		}
		return out, nil
	case "string", "integer", "number", "boolean":
		out := map[string]any{"type": typ}
		if len(enum) > 0 {
			if typ == "string" && enumType(enum) == "string" {
				out["enum"] = enum
			} else {
				desc = strings.TrimSpace(desc + " One of: " + enumText(enum) + ".")
			}
		}
		if f, ok := s["format"].(string); ok && typ == "string" && slices.Contains(portableFormats, f) && out["enum"] == nil {
			out["format"] = f
		}
		if desc != "" {
			out["description"] = desc
		}
		return out, nil
	}
	return p.text(s, ""), &argsPlan{text: true}
}

// object lists an object with properties: closed, each property required, an
// optional one nullable.
func (p *porter) object(props map[string]any, s map[string]any, depth int) (map[string]any, *argsPlan) {
	required, _ := s["required"].([]any)
	outProps := make(map[string]any, len(props))
	names := make([]any, 0, len(props))
	plan := &argsPlan{kind: "object"}
	for _, name := range sortedKeys(props) {
		listedName := name
		if p.gemini && depth == 1 && !geminiParamName.MatchString(name) {
			// Gemini's parameter names: letters, digits and underscores.
			listedName = p.paramName(name, props, outProps)
			if plan.rename == nil {
				plan.rename = map[string]string{}
			}
			plan.rename[listedName] = name
		}
		ps, ok := props[name].(map[string]any)
		if !ok {
			ps = map[string]any{} // true: any value
		}
		o, pl := p.port(ps, depth)
		if !slices.Contains(required, any(name)) {
			o = p.nullable(o)
			if plan.optional == nil {
				plan.optional = map[string]bool{}
			}
			plan.optional[name] = true
		}
		if pl != nil {
			if plan.props == nil {
				plan.props = map[string]*argsPlan{}
			}
			plan.props[name] = pl
		}
		outProps[listedName] = o
		names = append(names, listedName)
	}
	slices.SortFunc(names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	out := map[string]any{"type": "object", "properties": outProps, "required": names}
	if !p.gemini {
		out["additionalProperties"] = false
	}
	if d, ok := s["description"].(string); ok && d != "" {
		out["description"] = d
	}
	if plan.optional == nil && plan.props == nil && plan.rename == nil {
		return out, nil
	}
	return out, plan
}

// geminiParamName is what Gemini takes as a parameter's name.
var geminiParamName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

var notInParamName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// paramName is a parameter's name as Gemini takes it (X-Amz-Date as X_Amz_Date),
// unique among the object's names.
func (p *porter) paramName(name string, props, listed map[string]any) string {
	base := notInParamName.ReplaceAllString(name, "_")
	if base == "" || (base[0] >= '0' && base[0] <= '9') {
		base = "_" + base
	}
	if len(base) > 60 {
		base = base[:60]
	}
	out := base
	for i := 2; ; i++ {
		_, inFull := props[out]
		_, inListed := listed[out]
		if !inFull && !inListed {
			return out
		}
		out = base + "_" + strconv.Itoa(i)
	}
}

// nullable lets a listed schema take null too, unless it does already.
func (p *porter) nullable(o map[string]any) map[string]any {
	if o["type"] == "null" || o["nullable"] == true {
		return o
	}
	if ts, ok := o["type"].([]any); ok && slices.Contains(ts, any("null")) {
		return o
	}
	if branches, ok := o["anyOf"].([]any); ok {
		for _, b := range branches {
			if bs, ok := b.(map[string]any); ok && bs["type"] == "null" {
				return o
			}
		}
		if p.gemini {
			o["nullable"] = true
			return o
		}
		o["anyOf"] = append(branches, map[string]any{"type": "null"})
		return o
	}
	if p.gemini {
		o["nullable"] = true
		return o
	}
	if t, ok := o["type"].(string); ok && t != "object" && o["enum"] == nil {
		// A scalar or an array: [T, "null"], as OpenAI's strict mode documents it.
		o["type"] = []any{t, "null"}
		return o
	}
	desc, hasDesc := o["description"]
	inner := make(map[string]any, len(o))
	for k, v := range o {
		if k != "description" {
			inner[k] = v
		}
	}
	out := map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}
	if hasDesc {
		out["description"] = desc
	}
	return out
}

// text lists a value as a string holding it as JSON text; want is the JSON type the
// text must decode to ("" for any).
func (p *porter) text(s map[string]any, want string) map[string]any {
	desc, _ := s["description"].(string)
	what := "JSON text of the value"
	switch want {
	case "object":
		what = "JSON text of an object"
	case "array":
		what = "JSON text of an array"
	}
	if desc == "" {
		desc = what + "."
	} else {
		desc = strings.TrimRight(desc, " ") + " (" + what + ")"
	}
	return map[string]any{"type": "string", "description": desc}
}

// rootObject makes a root union of objects (which strict mode refuses at the root)
// one object with the properties of every branch, none of them required but the
// root's own: looser than the full schema, which the hub validates with.
func (p *porter) rootObject(root map[string]any) map[string]any {
	root = p.mergeAllOf(root)
	var branches []any
	for _, k := range []string{"anyOf", "oneOf"} {
		if b, ok := root[k].([]any); ok {
			branches = append(branches, b...)
		}
	}
	if len(branches) == 0 {
		return root
	}
	props := map[string]any{}
	if own, ok := root["properties"].(map[string]any); ok {
		for k, v := range own {
			props[k] = v
		}
	}
	for _, b := range branches {
		bs, ok := b.(map[string]any)
		if !ok {
			continue
		}
		if bs, _, ok = p.resolve(bs); !ok {
			continue
		}
		bp, _ := p.mergeAllOf(bs)["properties"].(map[string]any)
		for k, v := range bp {
			if _, dup := props[k]; !dup {
				props[k] = v
			}
		}
	}
	out := make(map[string]any, len(root))
	for k, v := range root {
		if k != "anyOf" && k != "oneOf" {
			out[k] = v
		}
	}
	out["type"] = "object"
	out["properties"] = props
	return out
}

// constraintOnly reports whether a union's branch only adds constraints to the
// schema it sits in ({"required":["a"]}) rather than saying a kind of value: the
// listing leaves such a union out, and the hub checks it.
func constraintOnly(s map[string]any) bool {
	for _, k := range []string{"type", "properties", "items", "enum", "const", "$ref", "anyOf", "oneOf", "allOf"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	return true
}

// limitEnums leaves out the enums past maxEnumValues in the listing, the largest
// first, so the most of them stay.
func (p *porter) limitEnums(root map[string]any) {
	var enums []map[string]any
	total := 0
	visit := func(s map[string]any) {
		e, ok := s["enum"].([]any)
		if !ok {
			return
		}
		if len(e) > bigEnum && len(enumText(e)) > bigEnumText {
			delete(s, "enum") // too long a text for one enum
			return
		}
		enums = append(enums, s)
		total += len(e)
	}
	walkSchemas(root, visit)
	if defs, ok := root["$defs"].(map[string]any); ok {
		for _, name := range sortedKeys(defs) {
			if d, ok := defs[name].(map[string]any); ok {
				walkSchemas(d, visit)
			}
		}
	}
	if total <= maxEnumValues {
		return
	}
	slices.SortStableFunc(enums, func(a, b map[string]any) int { return len(b["enum"].([]any)) - len(a["enum"].([]any)) })
	for _, s := range enums {
		if total <= maxEnumValues {
			break
		}
		e := s["enum"].([]any)
		total -= len(e)
		delete(s, "enum")
		if d, _ := s["description"].(string); len(d)+len(e)*8 < MaxDescription {
			// Said in the description while it fits.
			s["description"] = strings.TrimSpace(d + " One of: " + enumText(e) + ".")
		}
	}
}

func isNull(s map[string]any) bool {
	if s["type"] == "null" {
		return true
	}
	e, ok := s["enum"].([]any)
	return ok && len(e) == 1 && e[0] == nil
}

func withKey(s map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(s)+1)
	for kk, vv := range s {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// enumType is the JSON type all of an enum's values have, or "".
func enumType(enum []any) string {
	t := ""
	for _, v := range enum {
		var vt string
		switch v.(type) {
		case string:
			vt = "string"
		case bool:
			vt = "boolean"
		case json.Number, float64:
			vt = "number"
		default:
			return ""
		}
		if t != "" && t != vt {
			return ""
		}
		t = vt
	}
	return t
}

func enumText(enum []any) string {
	parts := make([]string, len(enum))
	for i, v := range enum {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

// cutDescription cuts a description at MaxDescription characters, ending it with an
// ellipsis when cut.
func cutDescription(d string) string {
	if utf8.RuneCountInString(d) <= MaxDescription {
		return d
	}
	n := 0
	for i := range d {
		if n == MaxDescription-1 {
			return strings.TrimRight(d[:i], " ") + "…"
		}
		n++
	}
	return d
}

// portableSharedMin is the size from which a portable listing says a repeated
// subschema once: lower than a lean listing's, as closing every object and listing
// every property in required make its subschemas larger and their repeats costlier.
const portableSharedMin = 64
