package workflows

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"google.golang.org/protobuf/types/known/structpb"
)

// The variables expressions see.
const (
	varParams = "params" // the run's parameters
	varSteps  = "steps"  // steps.<name>.output, .status, .error of the steps already ended
	varItem   = "item"   // the item of a foreach step
	varIndex  = "index"  // its position in the list, from 0
)

// evalCostLimit bounds the work of one expression's evaluation (a runaway
// comprehension fails rather than holding the engine).
const evalCostLimit = 1_000_000

// envs are the CEL environments: one for plain steps and outputs, one for foreach
// steps (with item and index).
type envs struct{ plain, foreach *cel.Env }

func newEnvs() (*envs, error) {
	base := []cel.EnvOption{
		cel.Variable(varParams, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varSteps, cel.MapType(cel.StringType, cel.DynType)),
		ext.Strings(), ext.Lists(), ext.Math(), ext.Encoders(),
	}
	plain, err := cel.NewEnv(base...)
	if err != nil {
		return nil, fmt.Errorf("build the expression environment: %w", err)
	}
	foreach, err := plain.Extend(cel.Variable(varItem, cel.DynType), cel.Variable(varIndex, cel.IntType))
	if err != nil {
		return nil, fmt.Errorf("build the foreach expression environment: %w", err)
	}
	return &envs{plain: plain, foreach: foreach}, nil
}

func (e *envs) of(foreach bool) *cel.Env {
	if foreach {
		return e.foreach
	}
	return e.plain
}

// exprRE finds ${{ expression }} in a string.
var exprRE = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// wholeRE matches a string that is one expression and nothing else: its value is the
// expression's, of any type.
var wholeRE = regexp.MustCompile(`^\s*\$\{\{(.*)\}\}\s*$`)

// expr is one compiled expression.
type expr struct {
	src  string
	ast  *cel.Ast
	prog cel.Program
}

// compileExpr compiles and type-checks one expression.
func compileExpr(env *cel.Env, src string) (*expr, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil, fmt.Errorf("the expression is empty")
	}
	a, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		var msgs []string
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("${{ %s }}: column %d: %s", src, e.Location.Column()+1, e.Message))
		}
		return nil, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	prog, err := env.Program(a, cel.CostLimit(evalCostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	return &expr{src: src, ast: a, prog: prog}, nil
}

// eval evaluates the expression and returns its value as JSON-like Go values.
func (x *expr) eval(ctx context.Context, vars map[string]any) (any, error) {
	v, _, err := x.prog.ContextEval(ctx, vars)
	if err != nil {
		return nil, fmt.Errorf("${{ %s }}: %w", x.src, err)
	}
	return toJSON(v)
}

// condition strips the optional ${{ }} around an if or foreach expression.
func condition(src string) string {
	if m := wholeRE.FindStringSubmatch(src); m != nil {
		return m[1]
	}
	return src
}

var structValueType = reflect.TypeOf(&structpb.Value{})

// toJSON converts a CEL value to what encoding/json makes of JSON: maps, slices,
// strings, float64 or int64 numbers, bools and nil.
func toJSON(v ref.Val) (any, error) {
	switch v.Type() {
	case types.IntType:
		return v.Value().(int64), nil
	case types.UintType:
		return int64(v.Value().(uint64)), nil
	case types.StringType, types.BoolType, types.DoubleType:
		return v.Value(), nil
	case types.NullType:
		return nil, nil
	}
	native, err := v.ConvertToNative(structValueType)
	if err != nil {
		return nil, fmt.Errorf("the value of type %s cannot be used as JSON: %w", v.Type().TypeName(), err)
	}
	return ints(native.(*structpb.Value).AsInterface()), nil
}

// ints turns whole float64 numbers into int64, so that values read from JSON work
// with CEL's integer arithmetic (params.count + 1).
func ints(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) && x < 1<<53 && x > -(1<<53) {
			return int64(x)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = ints(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = ints(e)
		}
		return x
	}
	return v
}

// value is a compiled value of args or outputs: a literal, one expression (the whole
// string), an interpolation (text with expressions, a string), or an object or list
// of values.
type value struct {
	lit   any
	whole *expr
	parts []part
	obj   map[string]*value
	arr   []*value
}

// part is text or an expression of an interpolated string.
type part struct {
	text string
	x    *expr
}

// exprError is an expression that does not compile, with where it is.
type exprError struct {
	path string
	err  error
}

// compileValue compiles every expression in v; path names v in errors.
func compileValue(env *cel.Env, path string, v any) (*value, []exprError) {
	switch x := v.(type) {
	case string:
		if m := wholeRE.FindStringSubmatch(x); m != nil && len(exprRE.FindAllStringIndex(x, -1)) == 1 {
			c, err := compileExpr(env, m[1])
			if err != nil {
				return nil, []exprError{{path, err}}
			}
			return &value{whole: c}, nil
		}
		locs := exprRE.FindAllStringSubmatchIndex(x, -1)
		if len(locs) == 0 {
			return &value{lit: x}, nil
		}
		var out value
		var errs []exprError
		at := 0
		for _, l := range locs {
			if l[0] > at {
				out.parts = append(out.parts, part{text: x[at:l[0]]})
			}
			c, err := compileExpr(env, x[l[2]:l[3]])
			if err != nil {
				errs = append(errs, exprError{path, err})
			} else {
				out.parts = append(out.parts, part{x: c})
			}
			at = l[1]
		}
		if at < len(x) {
			out.parts = append(out.parts, part{text: x[at:]})
		}
		return &out, errs
	case map[string]any:
		out := &value{obj: map[string]*value{}}
		var errs []exprError
		for _, k := range sortedKeys(x) {
			c, e := compileValue(env, path+"."+k, x[k])
			errs = append(errs, e...)
			out.obj[k] = c
		}
		return out, errs
	case []any:
		out := &value{arr: make([]*value, len(x))}
		var errs []exprError
		for i, e := range x {
			c, es := compileValue(env, fmt.Sprintf("%s[%d]", path, i), e)
			errs = append(errs, es...)
			out.arr[i] = c
		}
		return out, errs
	}
	return &value{lit: v}, nil
}

// eval builds the value's JSON from the variables.
func (v *value) eval(ctx context.Context, vars map[string]any) (any, error) {
	switch {
	case v == nil:
		return nil, nil
	case v.whole != nil:
		return v.whole.eval(ctx, vars)
	case v.parts != nil:
		var b strings.Builder
		for _, p := range v.parts {
			if p.x == nil {
				b.WriteString(p.text)
				continue
			}
			out, err := p.x.eval(ctx, vars)
			if err != nil {
				return nil, err
			}
			if s, ok := out.(string); ok {
				b.WriteString(s)
			} else {
				fmt.Fprint(&b, out)
			}
		}
		return b.String(), nil
	case v.obj != nil:
		m := make(map[string]any, len(v.obj))
		for k, e := range v.obj {
			out, err := e.eval(ctx, vars)
			if err != nil {
				return nil, err
			}
			m[k] = out
		}
		return m, nil
	case v.arr != nil:
		l := make([]any, len(v.arr))
		for i, e := range v.arr {
			out, err := e.eval(ctx, vars)
			if err != nil {
				return nil, err
			}
			l[i] = out
		}
		return l, nil
	}
	return v.lit, nil
}

// exprs lists every expression of the value.
func (v *value) exprs() []*expr {
	if v == nil {
		return nil
	}
	var out []*expr
	if v.whole != nil {
		out = append(out, v.whole)
	}
	for _, p := range v.parts {
		if p.x != nil {
			out = append(out, p.x)
		}
	}
	for _, k := range sortedKeys(v.obj) {
		out = append(out, v.obj[k].exprs()...)
	}
	for _, e := range v.arr {
		out = append(out, e.exprs()...)
	}
	return out
}

// jsonType is the JSON Schema type of the value where it is known: "" when it depends
// on data the checker cannot see.
func (v *value) jsonType(refType func(*expr) string) string {
	switch {
	case v.whole != nil:
		if t := celJSONType(v.whole.ast.OutputType()); t != "" {
			return t
		}
		return refType(v.whole)
	case v.parts != nil:
		return "string"
	case v.obj != nil:
		return "object"
	case v.arr != nil:
		return "array"
	}
	return literalJSONType(v.lit)
}

func literalJSONType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, int:
		return "integer"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}

// celJSONType is the JSON Schema type of a checked CEL type, "" for dyn.
func celJSONType(t *cel.Type) string {
	if t == nil {
		return ""
	}
	switch t.Kind() {
	case types.StringKind:
		return "string"
	case types.IntKind, types.UintKind:
		return "integer"
	case types.DoubleKind:
		return "number"
	case types.BoolKind:
		return "boolean"
	case types.ListKind:
		return "array"
	case types.MapKind:
		return "object"
	case types.NullTypeKind:
		return "null"
	}
	return ""
}

// reference is a select chain an expression reads: params.a.b or steps.s.output.x.
type reference struct {
	root string
	path []string
}

// references lists the params and steps chains an expression reads (each chain once,
// longest form).
func (x *expr) references() []reference {
	var out []reference
	seen := map[string]bool{}
	ast.PreOrderVisit(x.ast.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		root, path, ok := selectChain(e)
		if !ok {
			return
		}
		key := root + "." + strings.Join(path, ".")
		for k := range seen {
			if strings.HasPrefix(k, key+".") || k == key {
				return // a longer chain containing this one was already taken
			}
		}
		seen[key] = true
		out = append(out, reference{root: root, path: path})
	}))
	return out
}

// wholeReference returns the chain when the expression is nothing but one.
func (x *expr) wholeReference() (reference, bool) {
	root, path, ok := selectChain(x.ast.NativeRep().Expr())
	return reference{root: root, path: path}, ok
}

// selectChain reads a.b.c rooted at params or steps.
func selectChain(e ast.Expr) (string, []string, bool) {
	var path []string
	for e.Kind() == ast.SelectKind {
		s := e.AsSelect()
		if s.IsTestOnly() {
			return "", nil, false
		}
		path = append([]string{s.FieldName()}, path...)
		e = s.Operand()
	}
	if e.Kind() != ast.IdentKind || len(path) == 0 {
		return "", nil, false
	}
	root := e.AsIdent()
	if root != varParams && root != varSteps {
		return "", nil, false
	}
	return root, path, true
}
