package router

import (
	"strings"

	"github.com/switchboard-hub/switchboard/providers"
)

// Unconnected lists the tools of the providers a caller could connect with OAuth and
// has no connection of among have (its Tools): each a binding without connections, in
// registry order. A call of one cannot run until the person connects an account of its
// provider (a connect link), after which the tool is among the caller's Tools.
func (r *Router) Unconnected(have []Binding) []Binding {
	connected := map[string]bool{}
	for _, b := range have {
		if b.Tool.Provider != nil {
			connected[b.Tool.Provider.Name] = true
		}
	}
	var out []Binding
	for _, spec := range r.registry.Registered() {
		if spec.OAuth == nil || spec.Connectionless || spec.PerConnection() || connected[spec.Name] {
			continue
		}
		for _, t := range r.registry.Tools(spec.Name) {
			out = append(out, Binding{Tool: t})
		}
	}
	return out
}

// Unconnected reports whether a binding is a tool of a provider the caller has not
// connected (see Router.Unconnected): it needs a connection it does not have.
func (b Binding) Unconnected() bool {
	return len(b.Connections) == 0 && b.Tool.Provider != nil && !b.Tool.Provider.Connectionless
}

// MissingScopes are the scopes the tool needs that its connection c was not granted;
// none when the connection's scopes are not known.
func MissingScopes(t *providers.Tool, c ConnectionRef) []string {
	if c.Scopes == "" || len(t.Info.Scopes) == 0 {
		return nil
	}
	granted := map[string]bool{}
	for _, s := range strings.Fields(c.Scopes) {
		granted[s] = true
	}
	var out []string
	for _, s := range t.Info.Scopes {
		if !granted[s] {
			out = append(out, s)
		}
	}
	return out
}
