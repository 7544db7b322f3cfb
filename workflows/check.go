package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

// Catalog lists the tools a principal may call, with their connections: the router.
type Catalog interface {
	Tools(ctx context.Context, p switchboard.Principal) ([]router.Binding, error)
}

// Bound is a step resolved for a principal: the tool it calls and the connection.
type Bound struct {
	Tool         *providers.Tool
	ConnectionID string
	// Account is the connection as the caller knows it: its label (with its id only
	// where two of the caller's connections share the label).
	Account string
}

// Bindings are the steps of a program resolved for one principal, by step name.
type Bindings map[string]Bound

// Check checks a compiled program against the tools the principal may call (the
// catalog's answer for that principal: for an agent's key, only its agent's tools,
// each on its bound connection): every step's tool exists and is theirs to call, its
// connection is one of theirs, its arguments fit the tool's input schema (literals
// fully, expressions by type where the schemas say), what expressions read of
// earlier outputs exists in those tools' output schemas, and retry is asked only of
// read-only or idempotent tools. It returns the resolved steps, or Problems naming
// each step and field.
func Check(ctx context.Context, prog *Program, cat Catalog, p switchboard.Principal) (Bindings, error) {
	bs, err := cat.Tools(ctx, p)
	if err != nil {
		return nil, err
	}
	k := checker{prog: prog, bound: Bindings{}}
	k.bind(bs, p, nil)
	for _, s := range prog.Steps {
		if bd, ok := k.bound[s.Name]; ok && s.Input == nil {
			k.args(s, bd.Tool)
		}
	}
	k.outputs()
	if len(k.ps) > 0 {
		return nil, k.ps
	}
	return k.bound, nil
}

// bind binds each step to its tool and connection among the bindings bs, naming what
// does not bind; a step with a problem at its tool (in known) is left out.
func (k *checker) bind(bs []router.Binding, p switchboard.Principal, known Problems) {
	byTool := make(map[string]router.Binding, len(bs))
	for _, b := range bs {
		byTool[b.Tool.Name] = b
	}
	for _, s := range k.prog.Steps {
		if s.Input != nil {
			k.bound[s.Name] = Bound{Tool: inputTool(s.Input)}
			continue
		}
		if s.Tool == "" || slices.ContainsFunc(known, func(q Problem) bool { return q.Step == s.Name && q.Field == "tool" }) {
			continue
		}
		b, ok := byTool[s.Tool]
		if !ok && p.Kind == switchboard.PrincipalAgent {
			k.add(s.Name, "tool", "%s is not one of this agent's tools: an agent's key runs a workflow only on the tools its agent selected, each on the connection it is bound to", s.Tool)
			continue
		}
		if !ok {
			k.add(s.Name, "tool", "%s is not a tool you may call: it does not exist, or you have no usable connection of its provider", s.Tool)
			continue
		}
		if b.Tool.Provider.Connectionless {
			// Another workflow or one of the hub's own tools: it runs as the caller,
			// on no connection.
			if s.Connection != "" {
				k.add(s.Name, "connection", "%s runs on no connection; leave connection out", s.Tool)
				continue
			}
			k.bound[s.Name] = Bound{Tool: b.Tool}
			continue
		}
		conn, msg := pickConnection(b, s.Connection)
		if msg != "" {
			k.add(s.Name, "connection", "%s", msg)
			continue
		}
		k.bound[s.Name] = Bound{Tool: b.Tool, ConnectionID: conn, Account: labelOf(b.Connections, conn)}
		if s.OnError == OnErrorRetry && !b.Tool.Info.Hints.Retryable() {
			k.add(s.Name, "on_error", "retry is only for read-only or idempotent tools, and %s changes data (a retry could repeat its effect); use abort or continue", s.Tool)
		}
	}
}

// checkTools checks the steps of a program that did not compile whole (known are its
// problems so far): each step's tool and connection, and that the arguments its tool
// requires are given. Their expressions are not followed: they may not compile.
func checkTools(ctx context.Context, prog *Program, cat Catalog, p switchboard.Principal, known Problems) (Problems, error) {
	bs, err := cat.Tools(ctx, p)
	if err != nil {
		return nil, err
	}
	k := checker{prog: prog, bound: Bindings{}}
	k.bind(bs, p, known)
	for _, s := range prog.Steps {
		bd, ok := k.bound[s.Name]
		if !ok || s.Input != nil {
			continue
		}
		in := parseSchema(bd.Tool.InputSchema)
		if !in.followable() {
			continue
		}
		for _, req := range in.required() {
			if _, ok := s.Args[req]; !ok {
				k.add(s.Name, "args."+req, "is required by %s", bd.Tool.Name)
			}
		}
	}
	return k.ps, nil
}

// pickConnection finds the connection a step names (see router.PickConnection), or
// the only one.
func pickConnection(b router.Binding, named string) (string, string) {
	if named == "" {
		if len(b.Connections) == 1 {
			return b.Connections[0].ID, ""
		}
		return "", fmt.Sprintf("is required: you have several %s connections (%s); name one by its label or id", b.Tool.Provider.Title, router.QuotedLabels(b.Connections))
	}
	id, err := router.PickConnection(b.Connections, "connection", named)
	var e *switchboard.Error
	if errors.As(err, &e) {
		return "", e.Message
	}
	return id, ""
}

// labelOf is the label of the connection of that id among refs.
func labelOf(refs []router.ConnectionRef, id string) string {
	for _, c := range refs {
		if c.ID == id {
			return c.Label
		}
	}
	return ""
}

type checker struct {
	prog  *Program
	bound Bindings
	ps    Problems
}

func (k *checker) add(step, field, format string, args ...any) {
	k.ps = append(k.ps, Problem{Step: step, Field: field, Message: fmt.Sprintf(format, args...)})
}

// args checks a step's arguments against its tool's input schema.
func (k *checker) args(s *StepProgram, tool *providers.Tool) {
	in := parseSchema(tool.InputSchema)
	if !in.followable() {
		return
	}
	props := in.properties()
	for _, req := range in.required() {
		if _, ok := s.Args[req]; !ok {
			k.add(s.Name, "args."+req, "is required by %s", tool.Name)
		}
	}
	for _, name := range sortedKeys(s.Args) {
		field := "args." + name
		raw, ok := props[name]
		if !ok {
			if in.closed() {
				k.add(s.Name, field, "is not an argument of %s; its arguments are %s", tool.Name, strings.Join(sortedKeys(props), ", "))
			}
			continue
		}
		sub, _ := raw.(map[string]any)
		v := s.args.obj[name]
		if v == nil {
			continue
		}
		if len(v.exprs()) == 0 {
			k.literal(s.Name, field, schema(sub), s.Args[name])
			continue
		}
		if got := v.jsonType(k.refType); got != "" && !schema(sub).fits(got) {
			k.add(s.Name, field, "gives %s, but %s wants %s", got, tool.Name, strings.Join(schema(sub).types(), " or "))
		}
		for _, x := range v.exprs() {
			k.outputRefs(s.Name, field, x)
		}
	}
	if s.cond != nil {
		k.outputRefs(s.Name, "if", s.cond)
	}
	if s.each != nil {
		k.outputRefs(s.Name, "foreach", s.each)
		if t := k.refType(s.each); t != "" && t != "array" {
			k.add(s.Name, "foreach", "${{ %s }} is %s, not a list", s.each.src, t)
		}
	}
}

// literal validates a literal argument against its property's schema.
func (k *checker) literal(step, field string, sub schema, v any) {
	if !sub.followable() {
		return
	}
	raw, err := json.Marshal(sub)
	if err != nil {
		return
	}
	val, err := providers.NewValidator(raw)
	if err != nil {
		return
	}
	doc, err := json.Marshal(v)
	if err != nil {
		return
	}
	if err := val.Validate(doc); err != nil {
		e := switchboard.AsError(err)
		where := field
		if e.Field != "" && e.Field != "arguments" {
			where += "." + e.Field
		}
		k.add(step, where, "%s", e.Message)
	}
}

// outputs checks what the workflow's outputs read.
func (k *checker) outputs() {
	if k.prog.outputs == nil {
		return
	}
	for _, x := range k.prog.outputs.exprs() {
		k.outputRefs("", "outputs", x)
	}
	props, _ := parseSchema(k.prog.Def.OutputSchema)["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		sub, _ := props[name].(map[string]any)
		v := k.prog.outputs.obj[name]
		if v == nil || sub == nil {
			continue
		}
		field := "outputs." + name
		if len(v.exprs()) == 0 {
			k.literal("", field, schema(sub), k.prog.Def.Outputs[name])
		} else if got := v.jsonType(k.refType); got != "" && !schema(sub).fits(got) {
			k.add("", field, "gives %s, but output_schema says %s", got, strings.Join(schema(sub).types(), " or "))
		}
	}
}

// outputRefs checks that what an expression reads of earlier steps' outputs exists
// in their tools' output schemas.
func (k *checker) outputRefs(step, field string, x *expr) {
	for _, r := range x.references() {
		if r.root != varSteps || len(r.path) < 3 || r.path[1] != "output" {
			continue
		}
		dep, ok := k.prog.byName[r.path[0]]
		if !ok || dep.each != nil {
			continue
		}
		bd, ok := k.bound[dep.Name]
		if !ok {
			continue
		}
		if _, _, msg := parseSchema(bd.Tool.OutputSchema).at(r.path[2:]); msg != "" {
			k.add(step, field, "${{ %s }}: steps.%s.output (of %s): %s", x.src, dep.Name, bd.Tool.Name, msg)
		}
	}
}

// refType is the JSON type of an expression that is one params or steps chain, from
// the schemas ("" when they do not say).
func (k *checker) refType(x *expr) string {
	r, ok := x.wholeReference()
	if !ok {
		return ""
	}
	var sub schema
	switch r.root {
	case varParams:
		sub, _, _ = k.prog.pschema.at(r.path)
	case varSteps:
		dep, ok := k.prog.byName[r.path[0]]
		if !ok || len(r.path) < 2 {
			return ""
		}
		switch r.path[1] {
		case "status":
			if len(r.path) == 2 {
				return "string"
			}
			return ""
		case "output":
			if dep.each != nil {
				if len(r.path) == 2 {
					return "array"
				}
				return ""
			}
			bd, ok := k.bound[dep.Name]
			if !ok {
				return ""
			}
			sub, _, _ = parseSchema(bd.Tool.OutputSchema).at(r.path[2:])
		default:
			return ""
		}
	}
	if ts := sub.types(); len(ts) == 1 {
		return ts[0]
	}
	return ""
}
