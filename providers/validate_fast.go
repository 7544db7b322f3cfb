package providers

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// fastSchema answers, for the common shape of a tool's arguments, whether they are
// valid without the full JSON Schema validator: a flat object of plain strings, whole
// numbers and booleans, checked against a schema of type, properties, required,
// additionalProperties, enum (of strings), minLength, maxLength, minimum, maximum
// (whole numbers) and pattern. It only ever says "valid"; anything it is not sure of
// (another keyword used, a value it does not read, or a value that breaks a rule) goes
// to the full validator, which then says what is wrong and where. So it can make a
// valid call faster, never a different answer: FuzzFastValidation holds it to the
// full validator on every registered tool's schema. The full validator decodes the
// arguments into maps and compares numbers as big.Rat: for github_get_issue's
// arguments 3.3 µs and 49 allocations, against 0.17 µs and none here.
type fastSchema struct {
	props    map[string]*fastProp
	required []string
	closed   bool // additionalProperties: false
}

// fastProp is one property's rules.
type fastProp struct {
	// kind is the property's type: 's' string, 'i' integer, 'n' number, 'b' boolean;
	// 0 marks a property whose rules fastSchema does not check (its value always goes
	// to the full validator).
	kind             byte
	minLen, maxLen   int // -1: none
	hasMin, hasMax   bool
	minimum, maximum int64
	enum             []string
	pattern          *regexp.Regexp
}

// annotations are the keywords that do not constrain a value.
var annotations = []string{"description", "title", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly"}

// compileFast returns the fastSchema of a JSON Schema document, as the full
// validator decoded it (numbers as json.Number), or nil when the document is not of
// the shape it reads.
func compileFast(doc any) *fastSchema {
	top, ok := doc.(map[string]any)
	if !ok || top["type"] != "object" {
		return nil
	}
	fs := &fastSchema{props: map[string]*fastProp{}}
	for k, v := range top {
		switch {
		case k == "type":
		case k == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				fp := compileProp(p)
				if fp == nil {
					return nil
				}
				fs.props[name] = fp
			}
		case k == "required":
			names, ok := stringList(v)
			if !ok {
				return nil
			}
			fs.required = names
		case k == "additionalProperties":
			open, ok := v.(bool)
			if !ok {
				return nil
			}
			fs.closed = !open
		case slices.Contains(annotations, k):
		default:
			return nil
		}
	}
	return fs
}

// compileProp reads one property's schema: nil for a keyword fastSchema does not know
// (the whole schema then goes to the full validator), and a kind of 0 for a property
// it leaves to the full validator.
func compileProp(schema any) *fastProp {
	p, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	fp := &fastProp{minLen: -1, maxLen: -1}
	switch p["type"] {
	case "string":
		fp.kind = 's'
	case "integer":
		fp.kind = 'i'
	case "number":
		fp.kind = 'n'
	case "boolean":
		fp.kind = 'b'
	case "array", "object":
		// Checked by the full validator when present: their own keywords are theirs.
		return fp
	default:
		return nil
	}
	whole := func(v any) (int64, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	}
	text, numeric := fp.kind == 's', fp.kind == 'i' || fp.kind == 'n'
	for k, v := range p {
		var ok bool
		switch k {
		case "type":
			ok = true
		case "minLength":
			n, isWhole := whole(v)
			fp.minLen, ok = int(n), isWhole && n >= 0 && text
		case "maxLength":
			n, isWhole := whole(v)
			fp.maxLen, ok = int(n), isWhole && n >= 0 && text
		case "minimum":
			fp.minimum, ok = whole(v)
			fp.hasMin, ok = true, ok && numeric
		case "maximum":
			fp.maximum, ok = whole(v)
			fp.hasMax, ok = true, ok && numeric
		case "enum":
			fp.enum, ok = stringList(v)
			ok = ok && text
		case "pattern":
			if src, isText := v.(string); isText && text {
				re, err := regexp.Compile(src) // as the full validator compiles it
				fp.pattern, ok = re, err == nil
			}
		case "format":
			fp.kind, ok = 0, true // the full validator's business
		default:
			ok = slices.Contains(annotations, k)
		}
		if !ok {
			return nil
		}
	}
	return fp
}

// stringList returns v as a list of strings, if it is one.
func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// valid reports whether raw is sure to be valid; false means "ask the full
// validator", not "invalid".
func (fs *fastSchema) valid(raw []byte) bool {
	r := fastReader{b: raw}
	r.space()
	if !r.take('{') {
		return false
	}
	var seen [8][]byte // the names read, to refuse a repeated one
	n := 0
	r.space()
	if !r.take('}') {
		for {
			r.space()
			key, ok := r.str()
			if !ok {
				return false
			}
			if n == len(seen) || slices.ContainsFunc(seen[:n], func(s []byte) bool { return bytes.Equal(s, key) }) {
				return false
			}
			seen[n] = key
			n++
			r.space()
			if !r.take(':') {
				return false
			}
			r.space()
			p := fs.props[string(key)]
			if p == nil {
				if fs.closed {
					return false
				}
				if !r.skipScalar() {
					return false
				}
			} else if !p.check(&r) {
				return false
			}
			r.space()
			if r.take('}') {
				break
			}
			if !r.take(',') {
				return false
			}
		}
	}
	r.space()
	if r.i != len(r.b) {
		return false
	}
	for _, name := range fs.required {
		if !slices.ContainsFunc(seen[:n], func(s []byte) bool { return string(s) == name }) {
			return false
		}
	}
	return true
}

// check reads the property's value and reports whether it is sure to be valid.
func (p *fastProp) check(r *fastReader) bool {
	switch p.kind {
	case 's':
		s, ok := r.str()
		if !ok {
			return false
		}
		if p.minLen >= 0 || p.maxLen >= 0 {
			l := utf8.RuneCount(s)
			if p.minLen >= 0 && l < p.minLen || p.maxLen >= 0 && l > p.maxLen {
				return false
			}
		}
		if p.enum != nil && !slices.ContainsFunc(p.enum, func(e string) bool { return string(s) == e }) {
			return false
		}
		return p.pattern == nil || p.pattern.Match(s)
	case 'i', 'n':
		v, ok := r.whole()
		return ok && (!p.hasMin || v >= p.minimum) && (!p.hasMax || v <= p.maximum)
	case 'b':
		return r.literal("true") || r.literal("false")
	}
	return false
}

// fastReader reads the few JSON forms fastSchema knows, refusing all others.
type fastReader struct {
	b []byte
	i int
}

func (r *fastReader) space() {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\t' || r.b[r.i] == '\n' || r.b[r.i] == '\r') {
		r.i++
	}
}

func (r *fastReader) take(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *fastReader) literal(s string) bool {
	if len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid UTF-8: one
// whose decoded value is its bytes. On failure the reader stays where it was.
func (r *fastReader) str() ([]byte, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := r.b[r.i+1 : j]
			if !utf8.Valid(s) {
				return nil, false
			}
			r.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// whole reads an integer written without a fraction or an exponent, within int64's
// range less a margin (at most 15 digits, so no conversion anywhere rounds it). On
// failure the reader stays where it was.
func (r *fastReader) whole() (int64, bool) {
	j := r.i
	if j < len(r.b) && r.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' {
		j++
	}
	d := r.b[digits:j]
	if len(d) == 0 || len(d) > 15 || len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	if j < len(r.b) && (r.b[j] == '.' || r.b[j] == 'e' || r.b[j] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(r.b[r.i:j]), 10, 64)
	if err != nil {
		return 0, false
	}
	r.i = j
	return v, true
}

// skipScalar reads a value of a property no rule names: a string, a whole number or a
// literal.
func (r *fastReader) skipScalar() bool {
	if _, ok := r.str(); ok {
		return true
	}
	if _, ok := r.whole(); ok {
		return true
	}
	return r.literal("true") || r.literal("false") || r.literal("null")
}
