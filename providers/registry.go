package providers

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

var toolNamePattern = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// Tool is one registered operation under its tool name, with its schemas reflected
// once: the same bytes serve MCP, the REST catalog and the builder UI.
type Tool struct {
	Name         string // {provider}_{operation}
	Provider     *Spec
	Op           Op
	Info         Info
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// ListedInputSchema and ListedOutputSchema are the schemas as an MCP tools/list
	// serves them (ListedInput, ListedOutput): the input less what no model needs and
	// with what it repeats said once, the output reduced to its type and required
	// fields, for every kind of tool (NewConnectionTool too).
	ListedInputSchema  json.RawMessage
	ListedOutputSchema json.RawMessage
	// Input is the input schema as a value, for callers that extend it (the MCP
	// adapter adds a connection argument); treat it as read-only.
	Input *jsonschema.Schema
	// Meta is what the tool says of itself in its definition's _meta (a saved
	// workflow's tool: the model's id, version, name and the tool's kind); nil when
	// nothing. Treat it as read-only.
	Meta      map[string]any
	validator *Validator
	// profiles keeps the input's listings under the schema profiles (ListedFor),
	// made on first use; copies of the Tool share them.
	profiles *profiles
}

// Listed returns the schemas an MCP tools/list serves: the listed ones, or the full
// ones for a Tool built without them.
func (t *Tool) Listed() (input, output json.RawMessage) {
	input, output = t.ListedInputSchema, t.ListedOutputSchema
	if input == nil {
		input = t.InputSchema
	}
	if output == nil {
		output = t.OutputSchema
	}
	return input, output
}

// ConnectionArgument is the argument a surface adds to a tool for a caller with several
// accounts of its provider, naming the one to run as (by label or id).
const ConnectionArgument = "connection"

// TakesArgument reports whether the tool's own input has an argument of that name.
func (t *Tool) TakesArgument(name string) bool {
	if t == nil || t.Input == nil {
		return false
	}
	_, ok := t.Input.Properties[name]
	return ok
}

// Validate checks arguments against the tool's input schema, then by the operation's
// own check (Checker) if it has one; a failure is an invalid error that names the field.
func (t *Tool) Validate(args json.RawMessage) error {
	if err := t.validator.Validate(args); err != nil {
		return err
	}
	if c, ok := t.Op.(Checker); ok {
		return c.Check(args)
	}
	return nil
}

// Registry holds every provider and its tools. It is built at start-up and read-only
// afterwards, so it needs no lock; providers deferred while wiring (Defer) are added by
// Load into a part of their own, read once the load is over, and lookups that need one
// wait for it.
type Registry struct {
	specs    map[string]*Spec
	order    []string
	tools    map[string]*Tool
	byProv   map[string][]*Tool
	baseURLs map[string]string
	// perTenant are the connectionless providers whose tools exist per tenant.
	perTenant []*Spec
	late      *deferred
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{specs: map[string]*Spec{}, tools: map[string]*Tool{}, byProv: map[string][]*Tool{}, baseURLs: map[string]string{}}
}

// Register adds a provider and reflects the schemas of its operations.
func (r *Registry) Register(s Spec) error {
	if !toolNamePattern.MatchString(s.Name) {
		return fmt.Errorf("register provider %q: name must be lower-case snake_case", s.Name)
	}
	if _, dup := r.specs[s.Name]; dup || r.isDeferred(s.Name) {
		return fmt.Errorf("register provider %q: already registered", s.Name)
	}
	if s.Verify == nil && s.Tools == nil && !s.Connectionless {
		return fmt.Errorf("register provider %q: no Verify", s.Name)
	}
	if s.TenantTools != nil && !s.Connectionless {
		return fmt.Errorf("register provider %q: tools per tenant need a connectionless provider", s.Name)
	}
	if s.Ambient && !s.Connectionless {
		return fmt.Errorf("register provider %q: ambient, yet not connectionless", s.Name)
	}
	if s.Connectionless && s.Tools != nil {
		return fmt.Errorf("register provider %q: connectionless, yet tools per connection", s.Name)
	}
	if s.Tools != nil && len(s.Operations) > 0 {
		return fmt.Errorf("register provider %q: tools per connection and operations both", s.Name)
	}
	spec := &s
	tools := make([]*Tool, 0, len(s.Operations))
	for _, op := range s.Operations {
		t, err := newTool(spec, op)
		if err != nil {
			return fmt.Errorf("register provider %q: %w", s.Name, err)
		}
		if _, dup := r.tools[t.Name]; dup {
			return fmt.Errorf("register provider %q: tool %s twice", s.Name, t.Name)
		}
		r.tools[t.Name] = t
		tools = append(tools, t)
	}
	r.specs[s.Name] = spec
	r.order = append(r.order, s.Name)
	if spec.TenantTools != nil {
		r.perTenant = append(r.perTenant, spec)
	}
	r.byProv[s.Name] = tools
	return nil
}

func newTool(spec *Spec, op Op) (*Tool, error) {
	info := op.Info()
	name := spec.Name + "_" + info.Name
	if spec.OwnNames {
		name = info.Name
	}
	if !toolNamePattern.MatchString(info.Name) || len(name) > 64 {
		return nil, fmt.Errorf("operation %q: name must be snake_case and the tool name at most 64 characters", info.Name)
	}
	if info.Description == "" || info.Title == "" {
		return nil, fmt.Errorf("operation %s: title and description are required", info.Name)
	}
	in, err := op.InputSchema()
	if err != nil {
		return nil, fmt.Errorf("operation %s input: %w", info.Name, err)
	}
	out, err := op.OutputSchema()
	if err != nil {
		return nil, fmt.Errorf("operation %s output: %w", info.Name, err)
	}
	if in.Type != "object" || out != nil && out.Type != "object" {
		return nil, fmt.Errorf("operation %s: input and output must be structs", info.Name)
	}
	inRaw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var outRaw, listedOut json.RawMessage // none: the operation answers in content of no one schema
	if out != nil {
		if outRaw, err = json.Marshal(out); err != nil {
			return nil, err
		}
		if listedOut, err = ListedOutput(outRaw); err != nil {
			return nil, fmt.Errorf("operation %s output: %w", info.Name, err)
		}
	}
	v, err := NewValidator(inRaw)
	if err != nil {
		return nil, fmt.Errorf("operation %s: compile input schema: %w", info.Name, err)
	}
	listedIn, err := ListedInput(inRaw)
	if err != nil {
		return nil, fmt.Errorf("operation %s input: %w", info.Name, err)
	}
	return &Tool{Name: name, Provider: spec, Op: op, Info: info, InputSchema: inRaw, OutputSchema: outRaw,
		ListedInputSchema: listedIn, ListedOutputSchema: listedOut, Input: in, validator: v, profiles: &profiles{}}, nil
}

// SetBaseURL overrides a provider's API base URL (GitHub Enterprise Server, a test
// upstream). Call it while wiring, before the registry is shared.
func (r *Registry) SetBaseURL(provider, url string) error {
	if _, ok := r.specs[provider]; !ok && !r.isDeferred(provider) {
		return fmt.Errorf("set base URL: unknown provider %q", provider)
	}
	r.baseURLs[provider] = url
	return nil
}

// SetRateLimit overrides the token bucket each connection of a provider gets (a GitHub
// Enterprise Server with its own limits, a benchmark). Call it while wiring, before the
// registry is shared. For a deferred provider (Defer) it sets the rate and burst when
// the provider loads, and the wait unless rl's is zero.
func (r *Registry) SetRateLimit(provider string, rl RateLimit) error {
	s, ok := r.specs[provider]
	if !ok && r.isDeferred(provider) {
		r.late.rateLimits[provider] = rl
		return nil
	}
	if !ok {
		return fmt.Errorf("set rate limit: unknown provider %q", provider)
	}
	s.RateLimit = rl
	return nil
}

// BaseURL is the provider's API base URL in this deployment.
func (r *Registry) BaseURL(provider string) string {
	if u, ok := r.baseURLs[provider]; ok {
		return u
	}
	if s, ok := r.Provider(provider); ok {
		return s.BaseURL
	}
	return ""
}

// Provider returns a registered provider.
// A deferred provider is waited for.
func (r *Registry) Provider(name string) (*Spec, bool) {
	s, ok := r.specs[name]
	if !ok && r.isDeferred(name) {
		r.late.wait()
		s, ok = r.late.reg.specs[name]
	}
	return s, ok
}

// Providers returns every provider in registration order, the deferred ones last
// (waited for).
func (r *Registry) Providers() []*Spec {
	out := make([]*Spec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.specs[n])
	}
	if r.late != nil {
		r.late.wait()
		out = append(out, r.late.reg.Providers()...)
	}
	return out
}

// Registered returns the providers registered so far, in registration order, without
// waiting: the deferred ones only once their load is over. A caller that needs none of
// the deferred providers (a principal with no connection of theirs) lists with it.
func (r *Registry) Registered() []*Spec {
	out := make([]*Spec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.specs[n])
	}
	if r.late != nil && r.late.over() {
		out = append(out, r.late.reg.Providers()...)
	}
	return out
}

// Tool returns a tool by name.
// One of a deferred provider's is waited for.
func (r *Registry) Tool(name string) (*Tool, bool) {
	t, ok := r.tools[name]
	if !ok && r.late != nil {
		if _, ok := r.deferredFor(name); ok {
			r.late.wait()
			t, ok = r.late.reg.tools[name]
			return t, ok
		}
	}
	return t, ok
}

// Tools returns a provider's tools in the order its Spec lists them; a deferred
// provider's are waited for.
func (r *Registry) Tools(provider string) []*Tool {
	if _, ok := r.specs[provider]; !ok && r.isDeferred(provider) {
		r.late.wait()
		return slices.Clone(r.late.reg.byProv[provider])
	}
	return slices.Clone(r.byProv[provider])
}
