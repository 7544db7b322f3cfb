package providers

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// deferred are providers whose names are known at wiring but whose specs are built
// later, in the background (an operator's directory of API descriptions, slow to
// parse): lookups that need one of them wait for the load instead of missing it.
// Everything but done is written before the registry is shared or by Load before done
// closes, and read only after done has closed.
type deferred struct {
	sources    map[string]string // provider name → where its spec comes from (a file)
	done       chan struct{}
	reg        *Registry // the loaded providers, with their tools
	errs       map[string]error
	rateLimits map[string]RateLimit
}

// Defer reserves provider names whose specs Load registers later; sources names each
// one's origin for errors. Call it while wiring, after the eager providers are
// registered and before the registry is shared, at most once.
func (r *Registry) Defer(sources map[string]string) error {
	if r.late != nil {
		return fmt.Errorf("defer providers: already deferred")
	}
	for name := range sources {
		if !toolNamePattern.MatchString(name) {
			return fmt.Errorf("register provider %q: name must be lower-case snake_case", name)
		}
		if _, dup := r.specs[name]; dup {
			return fmt.Errorf("register provider %q: already registered", name)
		}
	}
	r.late = &deferred{sources: sources, done: make(chan struct{}), reg: NewRegistry(),
		errs: map[string]error{}, rateLimits: map[string]RateLimit{}}
	return nil
}

// Load builds and registers the deferred providers (build is given each one's name and
// source), one by one in name order, then
// releases every lookup waiting on them. A provider that fails keeps its error
// (LoadError) and stays out of the registry; report is told of each failure. Call it
// once, after Defer and every other Register and Set call (it reads the eager part to
// keep their tool names apart), typically on its own goroutine.
func (r *Registry) Load(build func(name, source string) (Spec, error), report func(name, source string, err error)) {
	d := r.late
	defer close(d.done)
	names := make([]string, 0, len(d.sources))
	for n := range d.sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		err := r.loadOne(name, build)
		if err != nil {
			d.errs[name] = err
			if report != nil {
				report(name, d.sources[name], err)
			}
		}
	}
}

func (r *Registry) loadOne(name string, build func(name, source string) (Spec, error)) error {
	d := r.late
	s, err := build(name, d.sources[name])
	if err != nil {
		return err
	}
	if s.Name != name {
		return fmt.Errorf("register provider %q: built as %q", name, s.Name)
	}
	if s.Tools != nil || s.TenantTools != nil {
		return fmt.Errorf("register provider %q: tools per connection or per tenant cannot load late", name)
	}
	if rl, ok := d.rateLimits[name]; ok {
		s.RateLimit.PerSecond, s.RateLimit.Burst = rl.PerSecond, rl.Burst
		if rl.MaxWait != 0 {
			s.RateLimit.MaxWait = rl.MaxWait
		}
	}
	// The tools must not shadow an eager one: check on a scratch registry first, so a
	// failure leaves nothing half-registered.
	scratch := NewRegistry()
	if err := scratch.Register(s); err != nil {
		return err
	}
	for _, t := range scratch.byProv[name] {
		if _, dup := r.tools[t.Name]; dup {
			return fmt.Errorf("register provider %q: tool %s twice", name, t.Name)
		}
		if _, dup := d.reg.tools[t.Name]; dup {
			return fmt.Errorf("register provider %q: tool %s twice", name, t.Name)
		}
	}
	for _, t := range scratch.byProv[name] {
		d.reg.tools[t.Name] = t
	}
	d.reg.specs[name] = scratch.specs[name]
	d.reg.order = append(d.reg.order, name)
	d.reg.byProv[name] = scratch.byProv[name]
	if sp := scratch.specs[name]; sp.TenantTools != nil {
		d.reg.perTenant = append(d.reg.perTenant, sp)
	}
	return nil
}

// Loaded waits until the deferred providers are loaded, or ctx ends (its error). It
// returns at once when nothing is deferred or the load is over.
func (r *Registry) Loaded(ctx context.Context) error {
	if r.late == nil {
		return nil
	}
	select {
	case <-r.late.done:
		return nil
	default:
	}
	select {
	case <-r.late.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LoadError is why a deferred provider failed to load (nil for any other name, or
// while it is loading).
func (r *Registry) LoadError(provider string) error {
	d := r.late
	if d == nil || !d.over() {
		return nil
	}
	if err := d.errs[provider]; err != nil {
		return fmt.Errorf("provider %s did not load from %s: %w", provider, d.sources[provider], err)
	}
	return nil
}

// AwaitTool waits, bounded by ctx, for the load of the deferred provider a tool name
// belongs to, and then answers its LoadError; it answers nil at once for any other name.
func (r *Registry) AwaitTool(ctx context.Context, tool string) error {
	name, ok := r.deferredFor(tool)
	if !ok {
		return nil
	}
	if err := r.Loaded(ctx); err != nil {
		return err
	}
	return r.LoadError(name)
}

// ToolLoadError is LoadError for the provider a tool name would belong to.
func (r *Registry) ToolLoadError(tool string) error {
	if name, ok := r.deferredFor(tool); ok {
		return r.LoadError(name)
	}
	return nil
}

func (d *deferred) over() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// wait blocks until the load is over; the load always ends, so this is bounded by its
// time. Callers with a request's context call Loaded first.
func (d *deferred) wait() { <-d.done }

// deferredFor reports the deferred provider a tool name would belong to ({provider}_...).
func (r *Registry) deferredFor(tool string) (string, bool) {
	if r.late == nil {
		return "", false
	}
	for name := range r.late.sources {
		if strings.HasPrefix(tool, name+"_") {
			return name, true
		}
	}
	return "", false
}

// Deferred reports whether a provider is one of those Defer named, loaded or not.
func (r *Registry) Deferred(provider string) bool { return r.isDeferred(provider) }

// HasDeferred reports whether providers were deferred (Defer), so that Load must run.
func (r *Registry) HasDeferred() bool { return r.late != nil }

func (r *Registry) isDeferred(provider string) bool {
	if r.late == nil {
		return false
	}
	_, ok := r.late.sources[provider]
	return ok
}
