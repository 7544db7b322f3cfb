package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Program is a definition whose structure and expressions were checked and compiled:
// what the engine runs. Compile makes it without knowing the tools; Check adds what
// only the caller's tools can say.
type Program struct {
	Def     *Definition
	Steps   []*StepProgram // in definition order
	byName  map[string]*StepProgram
	outputs *value
	params  *providers.Validator // nil when the workflow takes no parameters schema
	pschema schema
	// outSchema checks a run's outputs when it ends: nil when the definition declares
	// no output_schema.
	outSchema *providers.Validator
}

// StepProgram is one compiled step.
type StepProgram struct {
	Step
	index     int
	needs     []*StepProgram
	ancestors map[string]bool
	args      *value
	message   *value // an asking step's message (Input)
	cond      *expr
	each      *expr
}

// Step returns the compiled step of that name.
func (p *Program) Step(name string) (*StepProgram, bool) {
	s, ok := p.byName[name]
	return s, ok
}

// ParallelLimit is the definition's bound on steps at once, with its default.
func (p *Program) ParallelLimit() int {
	if p.Def.ParallelLimit > 0 {
		return p.Def.ParallelLimit
	}
	return DefaultParallelLimit
}

// Timeout is the definition's bound on a whole run, with its default.
func (p *Program) Timeout() time.Duration {
	if p.Def.Timeout > 0 {
		return time.Duration(p.Def.Timeout)
	}
	return DefaultTimeout
}

// ValidateParams checks a run's parameters against the parameters schema.
func (p *Program) ValidateParams(params json.RawMessage) error {
	if p.params == nil {
		return nil
	}
	return p.params.Validate(params)
}

// attempts is how many times the step is tried.
func (s *StepProgram) attempts() int {
	if s.OnError != OnErrorRetry {
		return 1
	}
	if s.Retry != nil && s.Retry.Attempts > 0 {
		return s.Retry.Attempts
	}
	return DefaultAttempts
}

// backoff is the wait before the try after the n-th (from 1) failed one.
func (s *StepProgram) backoff(n int) time.Duration {
	b := DefaultBackoff
	if s.Retry != nil && s.Retry.Backoff > 0 {
		b = time.Duration(s.Retry.Backoff)
	}
	for i := 1; i < n && b < time.Hour; i++ {
		b *= 2
	}
	return b
}

// Compile checks a definition's structure (names, the needs graph, limits, secrets)
// and compiles its expressions; every problem found is returned, each naming its step
// and field.
func Compile(def *Definition) (*Program, error) {
	prog, _, ps, err := compile(def)
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return prog, nil
}

// compile compiles def and returns every problem it found. whole says whether its
// steps compiled whole (only the workflow's own fields, its name, description, bounds,
// triggers, may be at fault), so a full check against the caller's tools can still
// report the steps' problems in the same answer; when they did not, the program holds
// the steps as far as they were read, for a check of their tools alone.
func compile(def *Definition) (prog *Program, whole bool, ps Problems, err error) {
	e, err := sharedEnvs()
	if err != nil {
		return nil, false, nil, err
	}
	c := compiler{env: e, p: &Program{Def: def, byName: map[string]*StepProgram{}}}
	c.ps = append(c.ps, def.Unread...)
	c.top()
	before := len(c.ps)
	c.steps()
	if len(c.ps) == before {
		c.cycles()
	}
	if len(c.ps) == before {
		c.expressions()
	}
	whole = len(c.ps) == before
	c.triggers()
	c.secrets()
	return c.p, whole, c.ps, nil
}

// CompileAndCheck compiles def and checks it against p's tools (Check), reporting
// the problems of both in one answer: a definition with a bad name, a misspelt tool,
// an expression that does not compile and a missing argument hears of all of them at
// once. Steps that did not compile whole still have their tools, connections and
// required arguments checked.
func CompileAndCheck(ctx context.Context, def *Definition, cat Catalog, p switchboard.Principal) (*Program, Bindings, error) {
	prog, whole, ps, err := compile(def)
	if err != nil {
		return nil, nil, err
	}
	if !whole {
		more, err := checkTools(ctx, prog, cat, p, ps)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, append(ps, more...)
	}
	bound, err := Check(ctx, prog, cat, p)
	if err != nil {
		var more Problems
		if !errors.As(err, &more) {
			return nil, nil, err
		}
		ps = append(ps, more...)
	}
	if len(ps) > 0 {
		return nil, nil, ps
	}
	return prog, bound, nil
}

type compiler struct {
	env *envs
	p   *Program
	ps  Problems
}

func (c *compiler) add(step, field, format string, args ...any) {
	c.ps = append(c.ps, Problem{Step: step, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *compiler) top() {
	d := c.p.Def
	switch {
	case d.Name == "":
		c.add("", "name", "is required")
	case !nameRE.MatchString(d.Name):
		c.add("", "name", "must start with a lowercase letter and hold only lowercase letters, digits and _ (at most 48 characters); %q does not", d.Name)
	case versionSuffixRE.MatchString(d.Name):
		c.add("", "name", "must not end in _ and digits: run_flow__%s would be the name of version %s of workflow %s; rename it, for example %s", d.Name,
			versionSuffixRE.FindStringSubmatch(d.Name)[1], strings.TrimSuffix(d.Name, versionSuffixRE.FindString(d.Name)), versionSuffixRE.ReplaceAllString(d.Name, "_v$1"))
	}
	if len(d.Description) > 1000 {
		c.add("", "description", "must be at most 1000 characters")
	}
	if d.Category != "" && !nameRE.MatchString(d.Category) {
		c.add("", "category", "must be lowercase letters, digits and _, like ops")
	}
	if d.ParallelLimit < 0 || d.ParallelLimit > MaxParallelLimit {
		c.add("", "parallel_limit", "must be between 1 and %d", MaxParallelLimit)
	}
	if d.Timeout < 0 || time.Duration(d.Timeout) > 24*time.Hour {
		c.add("", "timeout", "must be between 1s and 24h")
	}
	if len(d.Parameters) > 0 && string(d.Parameters) != "null" {
		var s schema
		if err := json.Unmarshal(d.Parameters, &s); err != nil || s == nil {
			c.add("", "parameters", "must be a JSON Schema object")
			return
		}
		if t, _ := s["type"].(string); t != "object" {
			c.add("", "parameters", `must be a JSON Schema with "type": "object"`)
			return
		}
		v, err := providers.NewValidator(d.Parameters)
		if err != nil {
			c.add("", "parameters", "is not a valid JSON Schema: %v", err)
			return
		}
		c.p.params, c.p.pschema = v, s
	}
	c.outputSchema()
}

// outputSchema checks the definition's output_schema: an object schema, valid, whose
// properties are outputs the definition declares.
func (c *compiler) outputSchema() {
	d := c.p.Def
	if len(d.OutputSchema) == 0 || string(d.OutputSchema) == "null" {
		return
	}
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(d.OutputSchema, &s); err != nil || s.Type != "object" {
		c.add("", "output_schema", `must be a JSON Schema with "type": "object"`)
		return
	}
	v, err := providers.NewValidator(d.OutputSchema)
	if err != nil {
		c.add("", "output_schema", "is not a valid JSON Schema: %v", err)
		return
	}
	c.p.outSchema = v
	for _, k := range sortedKeys(s.Properties) {
		if _, ok := d.Outputs[k]; !ok {
			c.add("", "output_schema", "describes %s, which is not one of the outputs", k)
		}
	}
	for _, k := range s.Required {
		if _, ok := d.Outputs[k]; !ok {
			if _, described := s.Properties[k]; !described {
				c.add("", "output_schema", "requires %s, which is not one of the outputs", k)
			}
		}
	}
}

// checkOutputs checks a run's outputs against the definition's output_schema: a
// failure names the output at fault and why, so a client holding the flow's tools to
// their output schema never meets a result they refuse.
func (p *Program) checkOutputs(outputs map[string]any) error {
	if p.outSchema == nil {
		return nil
	}
	if outputs == nil {
		outputs = map[string]any{}
	}
	raw, err := json.Marshal(outputs)
	if err != nil {
		return switchboard.Invalid("outputs", err.Error())
	}
	if err := p.outSchema.Validate(raw); err != nil {
		e := switchboard.AsError(err)
		field := "outputs"
		if e.Field != "" && e.Field != "arguments" {
			field += "." + e.Field
		}
		return switchboard.Invalid(field, "the run's outputs do not fit the workflow's output_schema: "+e.Message)
	}
	return nil
}

func (c *compiler) steps() {
	d := c.p.Def
	switch {
	case len(d.Steps) == 0:
		c.add("", "steps", "must hold at least one step")
	case len(d.Steps) > MaxSteps:
		c.add("", "steps", "must hold at most %d steps", MaxSteps)
	}
	for i := range d.Steps {
		s := &StepProgram{Step: d.Steps[i], index: i}
		name := s.Name
		switch {
		case name == "":
			name = fmt.Sprintf("#%d", i+1)
			c.add(name, "name", "is required")
		case !nameRE.MatchString(name):
			c.add(name, "name", "must start with a lowercase letter and hold only lowercase letters, digits and _")
		case c.p.byName[name] != nil:
			c.add(name, "name", "is used by step #%d too; step names are unique", c.p.byName[name].index+1)
			continue
		}
		s.Name = name
		c.p.byName[name] = s
		c.p.Steps = append(c.p.Steps, s)
		switch {
		case s.Input != nil:
			c.inputStep(s)
		case s.Tool == "":
			c.add(name, "tool", "is required (or input, for a step that asks the run's person)")
		}
		switch s.OnError {
		case "", OnErrorAbort, OnErrorContinue, OnErrorRetry:
		default:
			c.add(name, "on_error", "must be abort, continue or retry, not %q", s.OnError)
		}
		if s.Retry != nil {
			if s.OnError != OnErrorRetry {
				c.add(name, "retry", "applies only with on_error: retry")
			}
			if s.Retry.Attempts < 0 || s.Retry.Attempts > MaxAttempts {
				c.add(name, "retry.attempts", "must be between 1 and %d", MaxAttempts)
			}
			if s.Retry.Backoff < 0 || time.Duration(s.Retry.Backoff) > time.Hour {
				c.add(name, "retry.backoff", "must be between 0s and 1h")
			}
		}
		if s.Timeout < 0 || time.Duration(s.Timeout) > 24*time.Hour {
			c.add(name, "timeout", "must be between 1s and 24h")
		}
	}
	for _, s := range c.p.Steps {
		seen := map[string]bool{}
		for _, n := range s.Needs {
			dep := c.p.byName[n]
			switch {
			case n == s.Name:
				c.add(s.Name, "needs", "names the step itself")
			case dep == nil:
				c.add(s.Name, "needs", "names %q, which is not a step of this workflow", n)
			case seen[n]:
				c.add(s.Name, "needs", "names %q twice", n)
			default:
				seen[n] = true
				s.needs = append(s.needs, dep)
			}
		}
	}
}

// cycles finds a cycle in the needs graph, and each step's ancestors.
func (c *compiler) cycles() {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(s *StepProgram) bool
	visit = func(s *StepProgram) bool {
		color[s.Name] = grey
		stack = append(stack, s.Name)
		for _, d := range s.needs {
			switch color[d.Name] {
			case grey:
				i := 0
				for stack[i] != d.Name {
					i++
				}
				cycle := append(append([]string(nil), stack[i:]...), d.Name)
				c.add(d.Name, "needs", "forms a cycle: %s", strings.Join(cycle, " → "))
				return false
			case white:
				if !visit(d) {
					return false
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[s.Name] = black
		return true
	}
	for _, s := range c.p.Steps {
		if color[s.Name] == white && !visit(s) {
			return
		}
	}
	for _, s := range c.p.Steps {
		s.ancestors = map[string]bool{}
		var walk func(*StepProgram)
		walk = func(x *StepProgram) {
			for _, d := range x.needs {
				if !s.ancestors[d.Name] {
					s.ancestors[d.Name] = true
					walk(d)
				}
			}
		}
		walk(s)
	}
}

func (c *compiler) expressions() {
	for _, s := range c.p.Steps {
		foreach := strings.TrimSpace(s.Foreach) != ""
		if strings.TrimSpace(s.If) != "" {
			x, err := compileExpr(c.env.plain, condition(s.If))
			if err != nil {
				c.add(s.Name, "if", "%v", err)
			} else {
				if t := celJSONType(x.ast.OutputType()); t != "" && t != "boolean" {
					c.add(s.Name, "if", "must be true or false, but gives %s", t)
				}
				c.references(s, "if", x)
				s.cond = x
			}
		}
		if foreach {
			x, err := compileExpr(c.env.plain, condition(s.Foreach))
			if err != nil {
				c.add(s.Name, "foreach", "%v", err)
			} else {
				if t := celJSONType(x.ast.OutputType()); t != "" && t != "array" {
					c.add(s.Name, "foreach", "must give a list, but gives %s", t)
				}
				c.references(s, "foreach", x)
				s.each = x
			}
		}
		if s.Input != nil {
			c.inputMessage(s)
		}
		args, errs := compileValue(c.env.of(foreach), "args", toAnyMap(s.Args))
		for _, e := range errs {
			c.add(s.Name, e.path, "%v", e.err)
		}
		if args != nil {
			for _, x := range args.exprs() {
				c.references(s, "args", x)
			}
		}
		s.args = args
	}
	outs, errs := compileValue(c.env.plain, "outputs", toAnyMap(c.p.Def.Outputs))
	for _, e := range errs {
		c.add("", e.path, "%v", e.err)
	}
	if outs != nil {
		for _, x := range outs.exprs() {
			c.references(nil, "outputs", x)
		}
	}
	c.p.outputs = outs
}

func toAnyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// references checks what an expression of step s (nil for the outputs) reads: a
// parameter the schema declares, and a step that has ended before (one s needs).
func (c *compiler) references(s *StepProgram, field string, x *expr) {
	stepName := ""
	if s != nil {
		stepName = s.Name
	}
	for _, r := range x.references() {
		switch r.root {
		case varParams:
			if _, _, msg := c.p.pschema.at(r.path); msg != "" {
				c.add(stepName, field, "${{ %s }}: params.%s: %s", x.src, strings.Join(r.path, "."), msg)
			}
		case varSteps:
			dep := c.p.byName[r.path[0]]
			switch {
			case dep == nil:
				c.add(stepName, field, "${{ %s }}: steps.%s is not a step of this workflow", x.src, r.path[0])
				continue
			case s != nil && !s.ancestors[dep.Name]:
				c.add(stepName, field, "${{ %s }}: reads steps.%s, which this step does not need (add %s to its needs)", x.src, dep.Name, dep.Name)
				continue
			}
			if len(r.path) > 1 {
				switch r.path[1] {
				case "output", "status", "error":
				default:
					c.add(stepName, field, "${{ %s }}: steps.%s has output, status and error, not %s", x.src, dep.Name, r.path[1])
				}
			}
			if len(r.path) > 2 && r.path[1] == "output" && dep.each != nil {
				c.add(stepName, field, "${{ %s }}: steps.%s runs for each item, so its output is a list (one output per item); index it, like steps.%s.output[0]", x.src, dep.Name, dep.Name)
			}
		}
	}
}

// sharedEnvs returns the expression environments, built once: they are read-only
// after that, so every compile shares them.
var sharedEnvs = sync.OnceValues(newEnvs)

// triggers checks each trigger: one kind, a schedule cron parses, literal parameters
// that fit the parameters schema. How often a schedule may fire is the Service's to
// check (Service.MinScheduleInterval).
func (c *compiler) triggers() {
	for i, tr := range c.p.Def.Triggers {
		field := fmt.Sprintf("triggers[%d]", i)
		kinds := 0
		for _, set := range []bool{tr.Schedule != "", tr.GitHub != nil, tr.Slack != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			c.add("", field, "must have exactly one of schedule, github and slack")
			continue
		}
		if tr.Schedule != "" {
			if _, err := cron.ParseStandard(tr.Schedule); err != nil {
				c.add("", field+".schedule", "is not a cron schedule (minute hour day month weekday, or @hourly, @daily…): %v", err)
			}
		} else if len(tr.Params) > 0 {
			c.add("", field+".params", "applies only to a schedule: a webhook's event is the run's parameters")
		}
		if len(tr.Params) > 0 {
			raw, _ := json.Marshal(tr.Params)
			if exprRE.Match(raw) {
				c.add("", field+".params", "must be literal values: a scheduled run has no caller to read expressions from")
			} else if c.p.params != nil {
				if err := c.p.params.Validate(raw); err != nil {
					e := switchboard.AsError(err)
					c.add("", field+".params."+e.Field, "%s", e.Message)
				}
			}
		}
	}
}

// Schedules are the definition's schedule triggers, by their index in triggers.
func (p *Program) Schedules() map[int]Trigger {
	out := map[int]Trigger{}
	for i, tr := range p.Def.Triggers {
		if tr.Schedule != "" {
			out[i] = tr
		}
	}
	return out
}
